// Dead-letter retention: error_event_dead keeps a buried event 30 days, then the daily
// `errors.prune` job deletes it: exactly the expired ones, however many, in every environment.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deadLetterRetentionDays, pruneDeadLetters } from '../../src/domain/observability/intake/dead-letters.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { queues, schedules } from '../../src/jobs.ts';
import { startWorker } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { sealedSample } from './support.ts';

let h: Harness;
let env: CreatedEnv;

beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  await h?.close();
});

const day = 24 * 3600 * 1000;

/** Buries a (sealed) event at `deadTime`. */
async function bury(deadTime: Date, envId = env.env.id): Promise<string> {
  const row = sealedSample(h, envId);
  await h
    .db('error_event_dead')
    .insert({ ...row, receive_time: deadTime, dead_time: deadTime, attempts: 10, last_error: 'boom' });
  return row.uid;
}

const remaining = async (uids: string[]) =>
  (await h.db('error_event_dead').whereIn('uid', uids).orderBy('uid').pluck('uid')) as string[];

describe('dead-letter retention', () => {
  it('is 30 days', () => {
    expect(deadLetterRetentionDays).toBe(30);
  });

  it('deletes exactly the dead letters older than the retention, in every environment', async () => {
    const now = new Date('2026-12-31T12:00:00Z');
    const other = await createTestEnv(h.db);
    const expired = [
      await bury(new Date(now.getTime() - 30 * day - 1)),
      await bury(new Date(now.getTime() - 90 * day)),
      await bury(new Date(now.getTime() - 31 * day), other.env.id),
    ];
    const kept = [
      await bury(new Date(now.getTime() - 30 * day)),
      await bury(new Date(now.getTime() - 29 * day)),
      await bury(now),
    ];
    expect(await pruneDeadLetters(h.db, now)).toBe(expired.length);
    expect(await remaining([...expired, ...kept])).toEqual([...kept].sort());
    expect(await pruneDeadLetters(h.db, now)).toBe(0);
  });

  it('goes on past one delete statement when many have expired', async () => {
    const now = new Date('2027-03-01T00:00:00Z');
    await h.db('error_event_dead').delete(); // this file's database: the earlier tests' rows have expired by now
    await h.db.raw(
      `insert into error_event_dead (uid, env_id, receive_time, dead_time, attempts, last_error, payload_sealed)
       select 'err_zz' || lpad(g::text, 26, '0'), ?, ?::timestamptz, ?::timestamptz, 10, 'boom', 'v1.x.y.z' from generate_series(1, 5003) g`,
      [env.env.id, new Date(now.getTime() - 40 * day), new Date(now.getTime() - 40 * day)],
    );
    const keep = await bury(new Date(now.getTime() - day));
    expect(await pruneDeadLetters(h.db, now)).toBe(5003);
    expect(await remaining([keep])).toEqual([keep]);
  });

  it('runs daily as the errors.prune job, through the worker', async () => {
    expect(queues['errors.prune']).toBeDefined();
    expect(schedules.filter((s) => s.queue === 'errors.prune').map((s) => s.cron)).toEqual(['23 4 * * *']);
    const expired = await bury(new Date(Date.now() - 31 * day));
    const kept = await bury(new Date(Date.now() - 29 * day));
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
