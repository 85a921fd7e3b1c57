// Of N workers storing one group's events at once, exactly one fires: four real `errors.ingest`
// handler runs, each on its own transaction (from a pool of its own, as pg-boss's), store one event
// each of a group whose frequency rule's threshold every one of them reaches. The snooze's
// conditional upsert lets one firing through, with one action row and one send job.
import type { Knex } from 'knex';
import { fromKnex } from 'pg-boss';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDb } from '../../src/db.ts';
import type { IngestJob } from '../../src/domain/errors/intake/job.ts';
import { enqueueEvents } from '../../src/domain/errors/intake/writer.ts';
import type { Jobs } from '../../src/jobs/index.ts';
import type { queues } from '../../src/queues.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import type { WorkerContext } from '../../src/worker.ts';
import { errorsIngest } from '../../workers/errors-ingest.ts';
import { createHarness, createTestEnv, sqlNumber, type Harness } from '../support/harness.ts';
import { ingestQueued, sealedSample, testJobs } from '../errors/support.ts';
import { firingsOf, insertRule } from './support.ts';

let h: Harness;
let jobs: Jobs;
let txPool: Knex;

beforeAll(async () => {
  h = await createHarness();
  jobs = await testJobs(h);
  txPool = createDb(h.config, { poolMax: 8 });
});
afterAll(async () => {
  await jobs?.boss.stop({ graceful: false, close: true });
  await txPool?.destroy();
  await h?.close();
});

/** One worker's fetch of one job, run by the real handler on a transaction of its own; answers whether it had one. */
async function ingestOne(): Promise<boolean> {
  const [job] = await jobs.boss.fetch<IngestJob>('errors.ingest', { batchSize: 1, includeMetadata: true });
  if (!job) return false;
  const ctx = {
    config: h.config,
    db: h.db,
    jobs,
    log: pino({ level: 'silent' }),
    store: createObjectStore(h.config),
    stopping: new AbortController().signal,
  };
  const input = { id: job.id, data: job.data, retryCount: 0, retryLimit: 9, createdOn: job.createdOn };
  await txPool.transaction((trx) => errorsIngest()([input], ctx as WorkerContext<typeof queues>, fromKnex(trx)));
  return true;
}

it("fires once however many workers store the group's events at once", async () => {
  const env = await createTestEnv(h.db);
  const rule = await insertRule(h, env, {
    when: 'frequency',
    threshold_events: 1,
    threshold_window_minutes: 5,
    email: ['race@example.com'],
  });
  await enqueueEvents(h.db, jobs, [sealedSample(h, env.env.id)]);
  expect(await ingestQueued(h, jobs)).toBe(1);
  expect(await firingsOf(h, rule)).toHaveLength(1);

  // The snooze is over; four workers store an event of the group each, at once.
  await h
    .db('alert_snoozes')
    .where({ rule_id: rule })
    .update({ until: h.db.raw("now() - interval '1 second'") });
  for (let i = 0; i < 4; i++) await enqueueEvents(h.db, jobs, [sealedSample(h, env.env.id)]);
  expect(await Promise.all([ingestOne(), ingestOne(), ingestOne(), ingestOne()])).toEqual([true, true, true, true]);

  const firings = await firingsOf(h, rule);
  expect(firings).toHaveLength(2);
  // The first to take the group (the store locks it) fires, with the window as it then stood.
  expect(firings[1]!.facts).toMatchObject({ count: 2, window_minutes: 5 });
  expect(await sqlNumber(h.db, `select count(*) from alert_firing_actions`)).toBe(2);
  expect(await sqlNumber(h.db, `select count(*) from pgboss.job where name = 'alerts.send'`)).toBe(2);
  expect(await sqlNumber(h.db, `select sum(count) from alert_group_minutes`)).toBe(5);
});
