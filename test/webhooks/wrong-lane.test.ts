// An attempt queued in the other lane than its endpoint's (an emit that raced a lane move, a
// retry-state job, a worker stopped between an attempt's settle and the move: lanes.ts) is put in
// its endpoint's lane when a worker fetches it, unsent, and goes out from there, once. From
// outside: the API, the real worker, a receiver on 127.0.0.1.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WebHandle } from '../../src/server.ts';
import type { WorkerHandle } from '../../src/worker.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { apiFor, startReceiver, startWebhookWorker, type Receiver } from './support.ts';

let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<never> | undefined;
let receiver: Receiver;
const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  receiver = await startReceiver(() => 204);
});
afterAll(async () => {
  await worker?.stop();
  await receiver?.close();
});

const rows = async (endpointId: string) =>
  (
    await h.db.raw<{ rows: { name: string; id: string; state: string }[] }>(
      `select name, id::text, state::text from pgboss.job where data->>'endpoint_id' = ? order by created_on, name`,
      [endpointId],
    )
  ).rows;

it('sends an attempt found in the fast lane for a slow endpoint from the slow lane, once', async () => {
  const env = await createTestEnv(h.db);
  const api = apiFor(web, env.secretKey, env.env.name);
  const created = await api<{ id: string }>('POST', '/webhook_endpoints', { url: receiver.url, event_types: ['*'] });
  expect(created.status).toBe(201);
  const endpointId = created.body.id;
  // A new endpoint is slow; its first attempt waits in the slow lane (no worker runs yet).
  const user = await api('POST', '/end_users', { email: 'wrong-lane@example.com' });
  expect(user.status).toBe(201);
  await eventually(async () => (await rows(endpointId)).length === 1);
  const [queued] = await rows(endpointId);
  expect(queued).toMatchObject({ name: 'webhooks.deliver-slow', state: 'created' });

  // Left in the fast lane, as an emit racing a move to the slow lane leaves it.
  await h.db.raw(`update pgboss.job set name = 'webhooks.deliver' where name = 'webhooks.deliver-slow' and id = ?`, [
    queued!.id,
  ]);
  worker = (await startWebhookWorker(h)) as unknown as WorkerHandle<never>;

  await receiver.waitFor(1);
  await eventually(async () => (await rows(endpointId)).every((r) => r.state === 'completed'));
  // The fast lane's job went without sending; the same attempt was sent from the slow lane, in a
  // job of its own (a new id: one finished in that lane under the old id would drop it).
  const after = await rows(endpointId);
  expect(after.map((r) => [r.name, r.state]).sort()).toEqual([
    ['webhooks.deliver', 'completed'],
    ['webhooks.deliver-slow', 'completed'],
  ]);
  expect(after.find((r) => r.name === 'webhooks.deliver')!.id).toBe(queued!.id);
  expect(after.find((r) => r.name === 'webhooks.deliver-slow')!.id).not.toBe(queued!.id);
  expect(receiver.received).toHaveLength(1);
  const endpoint = await h.db('webhook_endpoints').where({ id: endpointId }).first('slow');
  expect(endpoint).toMatchObject({ slow: true });
}, 60_000);
