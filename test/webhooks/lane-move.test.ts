// An endpoint's lane change with a large backlog queued (lanes.ts): the settle records the lane in
// its own short transaction, and the queued attempts move after it in batches, each one statement
// on the server. The settle and every batch run here under a statement bound far below a worker's
// 10 s (the backlog is ~1/30 of one that took the old in-settle move past 10 s), so a move that
// scaled with the backlog inside one transaction fails here as it did there.
import type { Knex } from 'knex';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDb } from '../../src/db.ts';
import { moveQueued, settleLane } from '../../src/domain/webhooks/deliveries/lanes.ts';
import { keyringFromConfig, seal } from '../../src/crypto.ts';
import { secretContext } from '../../src/domain/webhooks/endpoints/endpoints.ts';
import { insertEndpoint } from '../../src/domain/webhooks/endpoints/queries.ts';
import { createBoss, Jobs } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';

let h: Harness;
let boss: ReturnType<typeof createBoss>;
let jobs: Jobs<typeof queues>;
let worker: Knex;
let env: string;
beforeAll(async () => {
  h = await createHarness();
  env = (await createTestEnv(h.db)).env.id;
  for (const id of [endpoint, other])
    await insertEndpoint(h.db, {
      id,
      env_id: env,
      url: 'https://example.com/hook',
      event_types: ['*'],
      description: '',
      secret_sealed: seal(keyringFromConfig(h.config), 'whsec_test', secretContext(id)),
    });
  boss = createBoss(h.config, 'web', { max: 2 });
  await boss.start();
  jobs = new Jobs(boss, queues);
  // One connection, its statements bounded at 600 ms (a worker's are at 10 s): moving 30,000 in the
  // settle takes over a second, a batch of 500 a few tens of milliseconds (150 ms was cut beside CI's load).
  worker = createDb(h.config, { poolMax: 1, role: 'worker' });
  await worker.raw('set statement_timeout = 600');
});
afterAll(async () => {
  await worker?.destroy();
  await boss?.stop({ graceful: false, close: true });
  await h?.close();
});

const endpoint = 'whep_' + 'a'.repeat(26);
const other = 'whep_' + 'b'.repeat(26);
const message = (i: number) => 'whmsg_' + i.toString(36).padStart(26, '0');

async function queue(endpointId: string, n: number, startAfter: Date): Promise<void> {
  for (let i = 0; i < n; i += 10_000) {
    const batch = Array.from({ length: Math.min(10_000, n - i) }, (_, j) => ({
      data: { endpoint_id: endpointId, message_id: message(i + j), attempt: 1 },
      group: { id: env },
      startAfter,
    }));
    await jobs.enqueueJobs(h.db, 'webhooks.deliver-slow', batch);
  }
}

const waiting = async (queueName: string, endpointId: string) =>
  (
    await h.db.raw<{ rows: { n: number; groups: string[]; later: number }[] }>(
      `select count(*)::int as n, array_agg(distinct group_id) as groups,
              count(*) filter (where start_after > now() + interval '1 hour')::int as later
         from pgboss.job where name = ? and state < 'active' and data->>'endpoint_id' = ?`,
      [queueName, endpointId],
    )
  ).rows[0]!;

it('records the lane change at once and moves a backlog of 30,000 queued attempts in bounded batches', async () => {
  const later = new Date(Date.now() + 2 * 3600_000);
  await queue(endpoint, 30_000, later);
  await queue(other, 50, later);

  // The third quick success in a row: back to the fast lane. The settle commits under the bound.
  const settled = await worker.transaction((trx) =>
    settleLane(trx, endpoint, { env_id: env, slow: true, quick_successes: 2 }, true),
  );
  expect(settled.slow).toBe(false);
  expect(settled.move).toEqual({
    endpointId: endpoint,
    from: 'webhooks.deliver-slow',
    to: 'webhooks.deliver',
    group: endpoint,
  });
  expect((await waiting('webhooks.deliver-slow', endpoint)).n).toBe(30_000);

  // Then the backlog, 2,000 a statement, each under the bound.
  expect(await moveQueued(worker, settled.move!, 500)).toBe(30_000);
  const fast = await waiting('webhooks.deliver', endpoint);
  expect(fast).toEqual({ n: 30_000, groups: [endpoint], later: 30_000 });
  expect((await waiting('webhooks.deliver-slow', endpoint)).n).toBe(0);
  // Another endpoint's attempts stay where they are.
  expect(await waiting('webhooks.deliver-slow', other)).toEqual({ n: 50, groups: [env], later: 50 });

  // Moved back (a failure): the same attempts, the environment's group again, nothing twice.
  await h.db('webhook_endpoints').where({ id: endpoint }).update({ slow: true });
  expect(
    await moveQueued(worker, {
      endpointId: endpoint,
      from: 'webhooks.deliver',
      to: 'webhooks.deliver-slow',
      group: env,
    }),
  ).toBe(30_000);
  expect(await waiting('webhooks.deliver-slow', endpoint)).toEqual({ n: 30_000, groups: [env], later: 30_000 });
  expect((await waiting('webhooks.deliver', endpoint)).n).toBe(0);

  // A move whose endpoint changed lanes again meanwhile moves nothing: the other move has it.
  expect(
    await moveQueued(worker, {
      endpointId: endpoint,
      from: 'webhooks.deliver-slow',
      to: 'webhooks.deliver',
      group: endpoint,
    }),
  ).toBe(0);
  expect((await waiting('webhooks.deliver-slow', endpoint)).n).toBe(30_000);
}, 120_000);
