// The slow lane's admissions (lane-queries.ts admitSlow), on the real database with pg-boss's own
// job rows: of attempts of one environment all active at once (as coinciding fetches leave them),
// checks at the same moment admit exactly 2; a job run again keeps its place; a place frees when
// its job ends, and the next check takes it (none waits forever); other environments are apart.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { admitSlow, pruneSlowAdmissions } from '../../src/domain/webhooks/deliveries/lane-queries.ts';
import { createBoss, syncQueues } from '../../src/jobs/index.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { queues } from '../../src/queues.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  // pg-boss's schema and the slow lane's queue, as the release phase makes them.
  const release = createBoss(h.config, 'release');
  await release.start();
  try {
    await syncQueues(release, { 'webhooks.deliver-slow': queues['webhooks.deliver-slow'] });
  } finally {
    await release.stop({ graceful: false, close: true });
  }
});
afterAll(async () => {
  await h?.close();
});

/** Jobs of the slow lane, `active` as a worker's fetch leaves them. */
async function activeJobs(envId: string, n: number): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID());
  await h.db.raw(
    `insert into pgboss.job (id, name, data, state, group_id, started_on)
     select unnest(?::uuid[]), 'webhooks.deliver-slow', '{}'::jsonb, 'active', ?, now()`,
    [ids, envId],
  );
  return ids;
}

const end = (id: string) =>
  h.db.raw(
    `update pgboss.job set state = 'completed', completed_on = now() where name = 'webhooks.deliver-slow' and id = ?`,
    [id],
  );

it('admits exactly 2 of 6 attempts checking at once, keeps a re-run in its place, and frees a place when its job ends', async () => {
  const env = (await createTestEnv(h.db)).env.id;
  const other = (await createTestEnv(h.db)).env.id;
  const jobs = await activeJobs(env, 6);
  const answers = await Promise.all(jobs.map((id) => admitSlow(h.db, env, id, 2)));
  expect(answers.filter(Boolean)).toHaveLength(2);
  const admitted = jobs.filter((_, i) => answers[i]);
  const waiting = jobs.filter((_, i) => !answers[i]);
  // A job run again (a killed worker's, taken over) keeps its admission.
  expect(await admitSlow(h.db, env, admitted[0]!, 2)).toBe(true);
  // Still full for the others; another environment has its own places.
  expect(await admitSlow(h.db, env, waiting[0]!, 2)).toBe(false);
  const [elsewhere] = await activeJobs(other, 1);
  expect(await admitSlow(h.db, other, elsewhere!, 2)).toBe(true);
  // One admitted attempt ends: the next check takes its place, and the place is full again.
  await end(admitted[0]!);
  expect(await admitSlow(h.db, env, waiting[0]!, 2)).toBe(true);
  expect(await admitSlow(h.db, env, waiting[1]!, 2)).toBe(false);
  // The ended job's admission was deleted on the way; the daily prune takes what is left of ended jobs.
  const rows = async () =>
    (await h.db('webhook_slow_admissions').where({ env_id: env }).select('job_id')).map(
      (r: { job_id: string }) => r.job_id,
    );
  expect((await rows()).sort()).toEqual([admitted[1]!, waiting[0]!].sort());
  await end(admitted[1]!);
  await end(waiting[0]!);
  expect(await pruneSlowAdmissions(h.db)).toBe(2);
  expect(await rows()).toEqual([]);
});
