// A web process stopped while it holds pending counts not yet written (writer.ts PendingCounts
// writes them a tenth of a second after their commit) writes them before it releases its pool:
// lost, they read low until the counts are reconciled, and that many more events could pend
// before captures are refused. The count is held back until the stop has begun (pendingCountHooks),
// so the stop always meets counts not yet written.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pendingCountHooks } from '../../src/domain/errors/intake/writer.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createHarness, createTestEnv, startTestWeb, type Harness } from '../support/harness.ts';
import { queuedEvents } from './support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;

// Not useWeb(): the test stops the web itself (the stop is what it tests), so no afterAll stops it again.
beforeAll(async () => {
  h = await createHarness();
  web = await startTestWeb(h);
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  pendingCountHooks.beforeFlush = undefined;
  await h?.close();
});

const event = (message: string) => ({ event_time: new Date().toISOString(), exception_type: 'Error', message });

it('writes the counts it holds when the web stops, so the count is exact', async () => {
  let stopping!: () => void;
  const stopBegun = new Promise<void>((resolve) => (stopping = resolve));
  pendingCountHooks.beforeFlush = () => stopBegun;

  const batch = await call<{ results: { uid?: string }[] }>(
    web.url,
    'POST',
    `/v1/${env.env.name}/error_groups:batchCapture`,
    { key: env.secretKey, body: { error_events: Array.from({ length: 300 }, (_, i) => event(`held ${i}`)) } },
  );
  expect(batch.status).toBe(202);
  const single = await call(web.url, 'POST', `/v1/${env.env.name}/error_groups:capture`, {
    key: env.secretKey,
    body: { error_event: event('last') },
  });
  expect(single.status).toBe(202);

  const stopped = web.stop();
  stopping();
  await stopped;

  // No worker ran: every accepted event waits in the queue, and the count says so.
  expect((await queuedEvents(h)).filter((e) => e.env_id === env.env.id)).toHaveLength(301);
  const row = await h.db('error_intake_pending').where({ env_id: env.env.id }).first();
  expect(Number(row?.pending)).toBe(301);
});
