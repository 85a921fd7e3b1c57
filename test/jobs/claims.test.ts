// Claim locks and the gone-worker reaper (src/jobs/claims) on the real Postgres and pg-boss: a claim whose
// handler is working holds its lock and is left alone; a claim whose lock is free (its worker's
// connection closed) is retried within a pass; a fresh claim is given its grace; several reapers at
// once retry each orphan exactly once; the reaper wakes its workers when the retries are due.
import { fromKnex, type PgBoss } from 'pg-boss';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { lockClaims } from '../../src/jobs/claims/queries.ts';
import { startClaimReaper } from '../../src/jobs/claims/reaper.ts';
import { createBoss, defineQueues, syncQueues } from '../../src/jobs/index.ts';
import { createLogger } from '../../src/log.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createGate, eventually } from '../support/probes.ts';

const queue = 'test.claimed';
const registry = defineQueues({
  [queue]: { schema: z.object({ n: z.number() }), retryLimit: 3, retryDelay: 1, transactional: true },
});

let h: Harness;
let boss: PgBoss;
const log = createLogger({ name: 'test', level: 'silent' });

beforeAll(async () => {
  h = await createHarness();
  const release = createBoss(h.config, 'release');
  await release.start();
  try {
    await syncQueues(release, registry);
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

const job = async (id: string) => (await boss.findJobs(queue, { id }))[0]!;

/** Sends `n` jobs and claims them as a worker's fetch does (state active, started now). */
async function claim(n: number) {
  for (let i = 0; i < n; i += 1) await boss.send(queue, { n: i });
  const jobs = await boss.fetch(queue, { batchSize: n, includeMetadata: true });
  expect(jobs).toHaveLength(n);
  return jobs;
}

/** A reaper that only runs when the test calls `pass()`. */
const reaper = (graceSeconds = 0, wake?: (q: string) => void) =>
  startClaimReaper(h.db, boss, log, {
    queues: [queue],
    intervalMs: 3_600_000,
    graceSeconds,
    ...(wake ? { wake } : {}),
  });

describe('the gone-worker reaper', () => {
  it('leaves a claim whose transaction holds its lock, and retries it once the transaction is gone', async () => {
    const [claimed] = await claim(1);
    const r = reaper();
    const holding = createGate();
    const locked = createGate();
    // A worker that holds the claim, then dies: its transaction rolls back and frees the lock.
    const worker = h.db
      .transaction(async (trx) => {
        await lockClaims(fromKnex(trx), [claimed!.id]);
        locked.open();
        await holding.wait();
        throw new Error('the process died');
      })
      .catch(() => undefined);
    await locked.wait();
    expect(await r.pass()).toBe(0);
    expect((await job(claimed!.id)).state).toBe('active');

    holding.open();
    await worker;
    expect(await r.pass()).toBe(1);
    const after = await job(claimed!.id);
    expect(after.state).toBe('retry');
    expect(after.retryCount).toBe(claimed!.retryCount);
    expect(await r.pass()).toBe(0);
    await r.stop();
  });

  it('gives a claim its grace: it may not be locked yet', async () => {
    const [claimed] = await claim(1);
    const r = reaper(60);
    expect(await r.pass()).toBe(0);
    expect((await job(claimed!.id)).state).toBe('active');
    await r.stop();
    await boss.complete(queue, claimed!.id);
  });

  it('retries each orphan exactly once when several workers look at once', async () => {
    const claimed = await claim(6);
    const reapers = Array.from({ length: 4 }, () => reaper());
    const counts = await Promise.all(reapers.map((r) => r.pass()));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(6);
    for (const c of claimed) {
      const after = await job(c.id);
      expect(after.state).toBe('retry');
      expect(after.output).toMatchObject({ message: 'worker gone: its claim lock was free' });
    }
    await Promise.all(reapers.map((r) => r.stop()));
  });

  it('wakes its workers when the retries it made are due', async () => {
    const [claimed] = await claim(1);
    const woken: { queue: string; at: number }[] = [];
    const r = reaper(0, (q) => woken.push({ queue: q, at: Date.now() }));
    const reaped = Date.now();
    expect(await r.pass()).toBe(1);
    await eventually(() => woken.length > 0, { timeoutMs: 10_000, intervalMs: 20 });
    expect(woken).toEqual([{ queue, at: expect.any(Number) }]);
    // The backoff of a first retry is 1-2 s; the wake comes when it is due, not before.
    expect(woken[0]!.at).toBeGreaterThanOrEqual(reaped + 900);
    expect((await job(claimed!.id)).state).toBe('retry');
    await r.stop();
  });
});

describe('a worker', () => {
  it("holds its jobs' claim locks while its handler works, so no reaper takes them", async () => {
    const gate = createGate();
    const seen: number[] = [];
    const worker: WorkerHandle<typeof registry> = await startWorker(
      h.config,
      registry,
      {
        [queue]: async (jobs) => {
          await gate.wait();
          seen.push(...jobs.map((j) => j.data.n));
        },
      },
      { log, pollingIntervalSeconds: 0.5, claimReaper: { intervalMs: 3_600_000 } },
    );
    try {
      const id = (await boss.send(queue, { n: 7 }))!;
      await gate.reached;
      const r = reaper();
      expect(await r.pass()).toBe(0);
      await r.stop();
      gate.open();
      await eventually(async () => (await job(id))?.state === 'completed');
      expect(seen).toContain(7);
    } finally {
      await worker.stop();
    }
  });
});
