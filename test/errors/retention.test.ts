// Retention of what the intake keeps: dead-lettered events stay 30 days in pg-boss's dead-letter
// queue (then pg-boss deletes them), and accepted event ids 90 days, after which the daily
// `errors.prune` job deletes them: exactly the expired ones, however many, in every environment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventIdRetentionDays, pruneEventIds } from '../../src/domain/errors/intake/event-ids.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { deadLetterName } from '../../src/jobs/index.ts';
import { queues, schedules, type AppJobs as Jobs } from '../../src/queues.ts';
import { startWorker } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { testJobs } from './support.ts';

let h: Harness;
let env: CreatedEnv;
let jobs: Jobs;

beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
  jobs = await testJobs(h);
});
afterAll(async () => {
  await jobs?.boss.stop({ graceful: false, close: true });
  await h?.close();
});

const day = 24 * 3600 * 1000;
let seq = 0;

/** Remembers an accepted event id at `acceptTime`. */
async function accepted(acceptTime: Date, envId = env.env.id): Promise<string> {
  const eventId = `e${String(seq++).padStart(31, '0')}`;
  await h
    .db('error_event_ids')
    .insert({ env_id: envId, event_id: eventId, uid: `err_c0${eventId}`, accept_time: acceptTime });
  return eventId;
}

const remaining = async (ids: string[]) =>
  (await h.db('error_event_ids').whereIn('event_id', ids).orderBy('event_id').pluck('event_id')) as string[];

describe('dead letters', () => {
  it('are kept 30 days by the dead-letter queue of errors.ingest', async () => {
    const queue = await jobs.boss.getQueue('errors.ingest');
    expect(queue?.deadLetter).toBe(deadLetterName('errors.ingest'));
    const dead = await jobs.boss.getQueue(deadLetterName('errors.ingest'));
    expect(dead).toMatchObject({ retentionSeconds: 30 * 24 * 3600, deleteAfterSeconds: 30 * 24 * 3600 });
  });
});

describe('event id retention', () => {
  it('is 90 days', () => {
    expect(eventIdRetentionDays).toBe(90);
  });

  it('deletes exactly the ids older than the retention, in every environment', async () => {
    const now = new Date('2026-12-31T12:00:00Z');
    const other = await createTestEnv(h.db);
    const expired = [
      await accepted(new Date(now.getTime() - 90 * day - 1)),
      await accepted(new Date(now.getTime() - 200 * day)),
      await accepted(new Date(now.getTime() - 91 * day), other.env.id),
    ];
    const kept = [
      await accepted(new Date(now.getTime() - 90 * day)),
      await accepted(new Date(now.getTime() - 89 * day)),
      await accepted(now),
    ];
    expect(await pruneEventIds(h.db, now)).toBe(expired.length);
    expect(await remaining([...expired, ...kept])).toEqual([...kept].sort());
    expect(await pruneEventIds(h.db, now)).toBe(0);
  });

  it('goes on past one delete statement when many have expired', async () => {
    const now = new Date('2027-06-01T00:00:00Z');
    await h.db('error_event_ids').delete(); // this file's database: the earlier tests' ids have expired by now
    await h.db.raw(
      `insert into error_event_ids (env_id, event_id, uid, accept_time)
       select ?, 'bulk' || g, 'err_c0bulk' || g, ?::timestamptz from generate_series(1, 5003) g`,
      [env.env.id, new Date(now.getTime() - 100 * day)],
    );
    const keep = await accepted(new Date(now.getTime() - day));
    expect(await pruneEventIds(h.db, now)).toBe(5003);
    expect(await remaining([keep])).toEqual([keep]);
  });

  it('runs daily as the errors.prune job, through the worker', async () => {
    expect(queues['errors.prune']).toBeDefined();
    expect(schedules.filter((s) => s.queue === 'errors.prune').map((s) => s.cron)).toEqual(['23 4 * * *']);
    const expired = await accepted(new Date(Date.now() - 91 * day));
    const kept = await accepted(new Date(Date.now() - 89 * day));
    const worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
    try {
      await worker.jobs.enqueue(h.db, 'errors.prune', {});
      await eventually(async () => (await remaining([expired])).length === 0);
      expect(await remaining([kept])).toEqual([kept]);
    } finally {
      await worker.stop();
    }
  });
});
