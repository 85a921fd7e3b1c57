// Worker liveness (src/jobs/claims/liveness.ts, takeover.ts) on the real Postgres and pg-boss: the jobs
// of a worker whose key is free are failed and made due at once, exactly once however many workers
// look; a live worker's jobs are left alone, also after its liveness session was cut and taken
// again; a key recorded for an earlier attempt never takes over a later one; a job no worker named
// is taken over after a grace, and its late worker skips it.
import type { PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startClaimReaper } from '../../src/jobs/claims/reaper.ts';
import { workerQueries } from '../../src/jobs/claims/worker-queries.ts';
import { createBoss, defineQueues, syncQueues } from '../../src/jobs/index.ts';
import { createLogger } from '../../src/log.ts';
import { startWorker } from '../../src/worker.ts';
import { createHarness, sqlNumber, type Harness } from '../support/harness.ts';
import { createGate, eventually } from '../support/probes.ts';

const queue = 'test.named';
const live = 'test.live';
const registry = defineQueues({
  // A long backoff: a job made due at once shows it was the takeover, not pg-boss's schedule.
  [queue]: { schema: z.object({ n: z.number() }), retryLimit: 3, retryDelay: 60 },
});
const liveRegistry = defineQueues({ [live]: { schema: z.object({ n: z.number() }), retryLimit: 3 } });

let h: Harness;
let boss: PgBoss;
const log = createLogger({ name: 'test', level: 'silent' });

beforeAll(async () => {
  h = await createHarness();
  const release = createBoss(h.config, 'release');
  await release.start();
  try {
    await syncQueues(release, { ...registry, ...liveRegistry });
  } finally {
    await release.stop({ graceful: false, close: true });
  }
  boss = createBoss(h.config, 'web', { max: 4 });
  await boss.start();
});
afterAll(async () => {
  await boss?.stop({ graceful: false, close: true });
  await h?.close();
});

const job = async (id: string, name = queue) => (await boss.findJobs(name, { id }))[0]!;

/** A reaper of other workers' jobs that only runs when the test calls `pass()`, with its own key. */
const reaper = (key = 1, queues = [queue], graceSeconds = 2) =>
  startClaimReaper(h.db, boss, log, { queues: [], workers: { queues, key }, intervalMs: 3_600_000, graceSeconds });

/** `n` jobs claimed as a worker's fetch does, and named with `key`, a key no session holds. */
async function claimedByGone(n: number, key: number) {
  for (let i = 0; i < n; i += 1) await boss.send(queue, { n: i });
  const jobs = await boss.fetch(queue, { batchSize: n, includeMetadata: true });
  expect(jobs).toHaveLength(n);
  await workerQueries(h.db).record(queue, jobs, key);
  return jobs;
}

describe('the takeover of a gone worker', () => {
  it('fails its jobs exactly once when several workers look at once, and makes them due now', async () => {
    const claimed = await claimedByGone(6, 424242);
    const reapers = Array.from({ length: 4 }, (_, i) => reaper(i + 1));
    const counts = await Promise.all(reapers.map((r) => r.pass()));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(6);
    for (const c of claimed) {
      const after = await job(c.id);
      expect(after.state).toBe('retry');
      expect(after.output).toMatchObject({ message: 'worker gone: its liveness lock was free' });
      expect(after.startAfter.getTime()).toBeLessThanOrEqual(Date.now() + 1000);
    }
    expect(await reapers[0]!.pass()).toBe(0);
    await Promise.all(reapers.map((r) => r.stop()));
  });

  it('leaves a later attempt alone: the key named an earlier one', async () => {
    const [first] = await claimedByGone(1, 535353);
    // The attempt is failed by other means (a heartbeat) and claimed again, not yet named.
    await boss.fail(queue, first!.id, { message: 'heartbeat' });
    await h.db.raw('update pgboss.job set start_after = now() where id = ?', [first!.id]);
    const [again] = await boss.fetch(queue, { batchSize: 1, includeMetadata: true });
    expect(again!.id).toBe(first!.id);
    await h.db.raw(
      `update pgboss.job set output = jsonb_build_object('cairn_worker', 535353, 'attempt', ?::int) where id = ?`,
      [first!.retryCount, first!.id],
    );
    const r = reaper();
    expect(await r.pass()).toBe(0);
    expect((await job(first!.id)).state).toBe('active');
    await r.stop();
    await boss.complete(queue, first!.id);
  });
});

describe('a job no worker named', () => {
  it('is taken over once older than the grace, and the worker that fetched it then skips it', async () => {
    await boss.send(queue, { n: 1 });
    const [fetched] = await boss.fetch(queue, { batchSize: 1, includeMetadata: true });
    // Within the grace: its worker may be about to name it.
    const patient = reaper();
    expect(await patient.pass()).toBe(0);
    await patient.stop();
    const r = reaper(1, [queue], 0);
    expect(await r.pass()).toBe(1);
    expect(await job(fetched!.id)).toMatchObject({
      state: 'retry',
      output: { message: 'worker gone: it never named itself on the job' },
    });
    // Its worker, late, cannot name it: the job is not its own any more.
    expect(await workerQueries(h.db).record(queue, [fetched!], 777)).toEqual(new Set());
    await r.stop();
  });
});

describe('a live worker', () => {
  it('keeps its jobs, and takes its key again when its liveness session is cut', async () => {
    const gate = createGate();
    const worker = await startWorker(
      h.config,
      liveRegistry,
      { [live]: async () => gate.wait() },
      { log, pollingIntervalSeconds: 0.5 },
    );
    const r = reaper(1, [live]);
    try {
      const id = (await boss.send(live, { n: 1 }))!;
      await gate.reached;
      await eventually(async () => (await job(id, live)).output != null);
      expect(await r.pass()).toBe(0);

      const session =
        "select pid from pg_stat_activity where datname = current_database() and application_name = 'cairn-worker-liveness'";
      const old = await sqlNumber(h.db, session);
      await h.db.raw('select pg_terminate_backend(?)', [old]);
      await eventually(
        async () => {
          const now = await h.db.raw<{ rows: { pid: number }[] }>(session);
          const pid = now.rows[0]?.pid;
          if (!pid || pid === old) return false;
          const held = await sqlNumber(
            h.db,
            "select count(*) from pg_locks where pid = ? and locktype = 'advisory' and granted",
            [pid],
          );
          return held === 1;
        },
        { timeoutMs: 10_000 },
      );
      // Between the cut and the new session, another worker could have taken the job over (and
      // the handler would have run twice, which handlers allow); once the key is held again, none does.
      expect(await r.pass()).toBe(0);
      expect((await job(id, live)).state).toBe('active');
      gate.open();
      await eventually(async () => (await job(id, live)).state === 'completed');
    } finally {
      gate.open();
      await r.stop();
      await worker.stop();
    }
  });
});
