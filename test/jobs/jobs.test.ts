// The job pipeline on the real Postgres and pg-boss: enqueue inside the caller's transaction,
// work, complete; retry then dead letter; a rolled-back transaction enqueues nothing; a worker
// without a handler for every queue refuses to start; a graceful stop finishes in-flight work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBoss, deadLetterName, defineQueues, syncQueues } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';
import { assertHandlers, startWorker, type Handlers, type WorkerHandle } from '../../src/worker.ts';
import { handlers as appHandlers } from '../../workers/handlers.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { withAdmin } from '../support/pg.ts';
import { createGate, eventually } from '../support/probes.ts';

const registry = defineQueues({
  'test.echo': { schema: z.object({ n: z.number() }), retryLimit: 2, retryDelay: 1, retryBackoff: false },
  'test.fail': { schema: z.object({ n: z.number() }), retryLimit: 1, retryDelay: 1, retryBackoff: false },
  'test.slow': { schema: z.object({ n: z.number() }), retryLimit: 0 },
});
type R = typeof registry;

let h: Harness;
let worker: WorkerHandle<R>;
const seen: number[] = [];
let failures = 0;
const gate = createGate();

const handlers: Handlers<R> = {
  'test.echo': async (jobs) => {
    for (const j of jobs) seen.push(j.data.n);
  },
  'test.fail': async () => {
    failures += 1;
    throw new Error('always fails');
  },
  'test.slow': async () => {
    await gate.wait();
  },
};

beforeAll(async () => {
  h = await createHarness();
  const release = createBoss(h.config, 'release');
  await release.start();
  try {
    await syncQueues(release, registry);
  } finally {
    await release.stop({ graceful: false, close: true });
  }
  worker = await startWorker(h.config, registry, handlers, { pollingIntervalSeconds: 0.5 });
});
afterAll(async () => {
  await worker?.stop();
  await h?.close();
});

const state = async (queue: string, id: string) => (await worker.boss.findJobs(queue, { id }))[0]?.state;

describe('jobs', () => {
  it('enqueues inside a transaction, works and completes', async () => {
    const id = await h.db.transaction((trx) => worker.jobs.enqueue(trx, 'test.echo', { n: 41 }));
    await eventually(async () => (await state('test.echo', id)) === 'completed');
    expect(seen).toContain(41);
  });

  it('enqueues nothing when the transaction rolls back', async () => {
    await expect(
      h.db.transaction(async (trx) => {
        await worker.jobs.enqueue(trx, 'test.echo', { n: 99 });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const { rows } = await h.db.raw<{ rows: { count: string }[] }>(
      "select count(*) from pgboss.job where name = 'test.echo' and data->>'n' = '99'",
    );
    expect(Number(rows[0]!.count)).toBe(0);
  });

  it('refuses a payload that does not match the queue schema', async () => {
    await expect(worker.jobs.enqueue(h.db, 'test.echo', { n: 'x' } as never)).rejects.toThrow();
  });

  it('retries, then moves the job to the dead-letter queue', async () => {
    const id = await worker.jobs.enqueue(h.db, 'test.fail', { n: 7 });
    await eventually(async () => (await state('test.fail', id)) === 'failed', { timeoutMs: 30_000 });
    expect(failures).toBe(2); // the first attempt and one retry
    const dead = await eventually(
      async () => (await worker.boss.findJobs(deadLetterName('test.fail'), { data: { n: 7 } }))[0],
    );
    expect(dead.data).toEqual({ n: 7 });
  });

  it("has a handler for every queue of the application's registry", () => {
    expect(() => assertHandlers(queues, appHandlers)).not.toThrow();
    expect(Object.keys(appHandlers).sort()).toEqual(Object.keys(queues).sort());
  });

  it('keeps a process alive when Postgres ends the idle connections of a boss nobody listens to', async () => {
    // A CLI or release boss has no 'error' listener of its own; without createBoss's, the pool's
    // idle-client error would be thrown as an uncaught exception and fail this run.
    const boss = createBoss(h.config, 'web');
    await boss.start();
    try {
      await boss.send('test.echo', { n: 70 });
      const ended = await withAdmin(async (c) => {
        const { rowCount } = await c.query(
          "select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = 'cairn-web-boss'",
          [h.database.name],
        );
        return rowCount;
      });
      expect(ended).toBeGreaterThan(0);
      await boss.send('test.echo', { n: 71 });
      await eventually(async () => seen.includes(70) && seen.includes(71));
    } finally {
      await boss.stop({ graceful: false, close: true });
    }
  });

  it('refuses to start a worker when a queue has no handler', async () => {
    const partial = { 'test.echo': handlers['test.echo'] } as unknown as Handlers<R>;
    await expect(startWorker(h.config, registry, partial)).rejects.toThrow(/queue "test.fail" has no handler/);
  });
});

describe('graceful stop', () => {
  it('stops fetching and finishes the job in flight', async () => {
    const slowOnly = { 'test.slow': registry['test.slow'] };
    const other = await startWorker(
      h.config,
      slowOnly,
      { 'test.slow': async () => gate.wait() },
      { pollingIntervalSeconds: 0.5 },
    );
    // The suite's main worker must not take the job: stop its slow-queue polling first.
    await worker.boss.offWork('test.slow');
    const id = await other.jobs.enqueue(h.db, 'test.slow', { n: 1 });
    await gate.reached;
    const stopping = other.stop();
    expect(await state('test.slow', id)).toBe('active');
    gate.open();
    await stopping;
    expect(await state('test.slow', id)).toBe('completed');
  });
});
