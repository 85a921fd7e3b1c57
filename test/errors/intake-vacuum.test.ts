// The intake does not bloat (src/domain/errors/intake/vacuum.ts): with autovacuum off (as
// on this test server), the jobs that captures insert and workers delete leave dead tuples; the
// every-minute `errors.vacuum` job vacuums the table once there are enough of them, so the space
// is used again instead of the table growing.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { vacuumIntake } from '../../src/domain/errors/intake/vacuum.ts';
import { intakeGarbage } from '../../src/domain/errors/intake/queries.ts';
import { schedules, type AppJobs as Jobs } from '../../src/queues.ts';
import { createHarness, sqlNumber, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { testJobs } from './support.ts';

let h: Harness;
let jobs: Jobs;
let table: string;

beforeAll(async () => {
  h = await createHarness();
  jobs = await testJobs(h);
  table = (await intakeGarbage(h.db)).table;
});
afterAll(async () => {
  await jobs?.boss.stop({ graceful: false, close: true });
  await h?.close();
});

/** Jobs as big as the intake's (32 KB of sealed events), inserted then deleted as workers do. */
async function churn(count: number): Promise<void> {
  for (let i = 0; i < count; i += 100) {
    await jobs.boss.insert(
      'errors.ingest',
      // Sealed payloads do not compress: neither may these.
      Array.from({ length: 100 }, () => ({
        data: { events: [{ payload_sealed: randomBytes(3000).toString('base64') }] },
      })),
    );
  }
  await h.db.raw('delete from ??', [`pgboss.${table}`]);
}

const size = () => sqlNumber(h.db, 'select pg_total_relation_size(?::regclass)', [`pgboss.${table}`]);

describe('the intake vacuum', () => {
  it('runs every minute', () => {
    expect(schedules.filter((s) => s.queue === 'errors.vacuum').map((s) => s.cron)).toEqual(['* * * * *']);
  });

  it('leaves a table with few dead jobs alone, and vacuums one with many so that its space is used again', async () => {
    await churn(200);
    await eventually(async () => (await intakeGarbage(h.db)).dead_jobs >= 200);
    expect(await vacuumIntake(h.db)).toMatchObject({ vacuumed: false, table });

    await churn(1200);
    await eventually(async () => (await intakeGarbage(h.db)).dead_jobs >= 1000);
    const bloated = await size();
    expect(await vacuumIntake(h.db)).toMatchObject({ vacuumed: true, table });
    // The same churn again fits in the space the vacuum freed: the table does not grow past the
    // size one round of dead jobs gave it (without the vacuum, every round adds as much again).
    await churn(1200);
    expect(await size()).toBeLessThanOrEqual(bloated * 1.05);
  });
});
