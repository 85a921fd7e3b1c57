// One environment's slow-lane attempts run at most 2 at once on every worker together, even when
// workers fetch at the same moment (pg-boss checks a group's limit per fetch, so coinciding fetches
// can each take the last place): an attempt over the limit waits its turn unsent, and is sent
// once, later, when one of the 2 ends. From outside: the API, three real workers (12 slow-lane fetch loops woken by the
// same NOTIFY), a receiver on 127.0.0.1 that never answers.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WebHandle } from '../../src/server.ts';
import type { WorkerHandle } from '../../src/worker.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { apiFor, startReceiver, startWebhookWorker, type Receiver } from './support.ts';

let h: Harness;
let web: WebHandle;
const workers: WorkerHandle<never>[] = [];
let dead: Receiver;
const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  dead = await startReceiver(() => 'hang');
  for (let i = 0; i < 3; i++) workers.push((await startWebhookWorker(h)) as unknown as WorkerHandle<never>);
});
afterAll(async () => {
  for (const w of workers) await w.stop();
  await dead?.close();
});

it('holds 2 attempts of an environment at once across three workers fetching together, the rest waiting unsent', async () => {
  const env = await createTestEnv(h.db);
  const api = apiFor(web, env.secretKey, env.env.name);
  for (let i = 0; i < 8; i++) {
    const created = await api('POST', '/webhook_endpoints', { url: `${dead.url}?e=${i}`, event_types: ['*'] });
    expect(created.status).toBe(201);
  }
  // Each sign-up's one transaction queues 8 attempts (one per endpoint) and wakes every loop.
  for (let i = 0; i < 3; i++) {
    const user = await api('POST', '/end_users', { email: `limit${i}@example.com` });
    expect(user.status).toBe(201);
  }
  await dead.waitFor(2);
  // Attempts over the limit are queued again a second later: watch for three of those rounds.
  // None of the 2 running ends before its 15 s timeout, so 2 is what the receiver has seen.
  for (let i = 0; i < 6; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(dead.received.length).toBe(2);
  }
  const running = await h.db.raw<{ rows: { n: number }[] }>(
    `select count(*)::int as n from pgboss.job where name = 'webhooks.deliver-slow' and group_id = ? and state = 'active'`,
    [env.env.id],
  );
  expect(running.rows[0]!.n).toBeLessThanOrEqual(2);
  // Every attempt is still due (24 of them), each queued once.
  const due = await h.db.raw<{ rows: { n: number; attempts: number }[] }>(
    `select count(*)::int as n, count(distinct (data->>'endpoint_id', data->>'message_id'))::int as attempts
       from pgboss.job where name = 'webhooks.deliver-slow' and group_id = ? and state < 'completed'`,
    [env.env.id],
  );
  expect(due.rows[0]).toEqual({ n: 24, attempts: 24 });
  // Not stuck: when the first 2 end at their 15 s timeout, 2 more are admitted, and only 2.
  await dead.waitFor(4, undefined, 30_000);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  expect(dead.received.length).toBe(4);
}, 60_000);
