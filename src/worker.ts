// The worker runtime: one pg-boss worker per queue of the registry. It refuses to start when a
// queue has no handler. On SIGTERM it stops fetching, tells long jobs (`ctx.stopping`), and waits
// for in-flight jobs; a job it cannot finish in time stays active and is taken over by another
// worker once this one's liveness session closes (src/jobs/claims/takeover.ts), and handlers are
// idempotent.
import type { Knex } from 'knex';
import type { ConstructorOptions, Db as BossDb, JobWithMetadata, PgBoss } from 'pg-boss';
import type { z } from 'zod';
import type { Config } from './config.ts';
import { connectionShares, createDb } from './db.ts';
import { bossBoundRedundant } from './db-timeouts.ts';
import { startLiveness } from './jobs/claims/liveness.ts';
import { lockClaims } from './jobs/claims/queries.ts';
import { workerQueries } from './jobs/claims/worker-queries.ts';
import { startClaimReaper, type ClaimReaper, type ClaimReaperOptions } from './jobs/claims/reaper.ts';
import { createBoss, Jobs, type QueueDef, type Registry, type ScheduleDef } from './jobs/index.ts';
import { createLogger, type Logger } from './log.ts';
import { createObjectStore } from './storage/index.ts';
import { inJobSpan, splitTrace } from './telemetry/jobs.ts';
import type { ObjectStore } from './storage/object-store.ts';

export interface WorkerContext<R extends Registry = Registry> {
  config: Config;
  db: Knex;
  jobs: Jobs<R>;
  log: Logger;
  store: ObjectStore;
  /** Aborted when the worker is told to stop (SIGTERM): long jobs hand their work back to be retried. */
  stopping: AbortSignal;
}

export interface JobInput<T> {
  id: string;
  data: T;
  /** Attempts before this one. */
  retryCount: number;
  retryLimit: number;
  /** When the job was created (the database's clock). */
  createdOn: Date;
}

/**
 * `tx`, for a queue declared `transactional`: the transaction its jobs are settled in. Writes made
 * through it commit only with the jobs' completion, and only while this worker holds their claim.
 */
export type JobHandler<S extends z.ZodType = z.ZodType, R extends Registry = Registry> = (
  jobs: JobInput<z.infer<S>>[],
  ctx: WorkerContext<R>,
  tx?: BossDb,
) => Promise<void>;

export type Handlers<R extends Registry> = { [K in keyof R]: JobHandler<R[K]['schema'], R> };

export function assertHandlers(registry: Registry, handlers: Record<string, unknown>): void {
  const missing = Object.keys(registry).filter((name) => typeof handlers[name] !== 'function');
  const unknown = Object.keys(handlers).filter((name) => !(name in registry));
  const problems = [
    ...missing.map((n) => `queue "${n}" has no handler: add one to workers/handlers.ts`),
    ...unknown.map((n) => `handler "${n}" has no queue: declare it in its feature's queues.ts and src/queues.ts`),
  ];
  if (problems.length > 0) throw new Error(`the worker cannot start:\n  - ${problems.join('\n  - ')}`);
}

export interface WorkerHandle<R extends Registry> {
  boss: PgBoss;
  jobs: Jobs<R>;
  db: Knex;
  stop(): Promise<void>;
}

export interface WorkerOptions {
  log?: Logger;
  /** pg-boss settings over the worker's own (tests shorten the supervisor's interval). */
  bossOptions?: Partial<ConstructorOptions>;
  /**
   * Seconds between polls. NOTIFY wakes workers the moment a job is created, but retries and
   * delayed jobs become due silently, so the poll is what picks them up: keep it short.
   */
  pollingIntervalSeconds?: number;
  /** Milliseconds to wait for in-flight jobs on stop. */
  stopTimeoutMs?: number;
  /** Cron schedules to register (the app passes `schedules` from src/queues.ts). */
  schedules?: readonly ScheduleDef[];
  /** The gone-worker reaper's timing (src/jobs/claims/reaper.ts); tests lengthen it to watch the heartbeat alone. */
  claimReaper?: Omit<ClaimReaperOptions, 'queues'>;
}

/** Names this worker on the jobs it fetched; returns those it could name (the others were taken over). */
type NameJobs = <J extends { id: string; retryCount: number }>(name: string, inputs: J[]) => Promise<J[]>;

function jobNamer(db: Knex, log: Logger, key: number): NameJobs {
  return async (name, inputs) => {
    const recorded = await workerQueries(db).record(name, inputs, key);
    if (recorded.size < inputs.length)
      log.warn({ queue: name, jobs: inputs.length - recorded.size }, 'jobs taken over before they started');
    return inputs.filter((j) => recorded.has(j.id));
  };
}

/** One fetched batch of a queue: parsed, its claim held or its worker named, then handled in a span. */
function batchRunner<R extends Registry>(
  name: string,
  def: QueueDef,
  handler: JobHandler,
  ctx: WorkerContext<R>,
  nameJobs: NameJobs,
) {
  return async (batch: JobWithMetadata<object>[], tx?: BossDb): Promise<void> => {
    const started = performance.now();
    const traced = batch.map((job) => ({ job, ...splitTrace(job.data) }));
    const spanJobs = traced.map(({ job, carrier }) => ({ id: job.id, carrier }));
    await inJobSpan(name, spanJobs, async () => {
      const inputs = traced.map(({ job, data }) => ({
        id: job.id,
        data: def.schema.parse(data),
        retryCount: job.retryCount,
        retryLimit: job.retryLimit,
        createdOn: job.createdOn,
      }));
      // First, so the claim is visibly held while the handler works (src/jobs/claims/reaper.ts), or
      // its worker named on the jobs (src/jobs/claims/takeover.ts).
      if (tx)
        await lockClaims(
          tx,
          inputs.map((j) => j.id),
        );
      // A job this worker could not name is no longer its own (taken over as never named, by a
      // worker that found it older than the takeover's grace): another attempt runs it.
      const mine = tx ? inputs : await nameJobs(name, inputs);
      if (mine.length > 0) await handler(mine, ctx, tx);
    });
    ctx.log.debug({ queue: name, jobs: batch.length, ms: Math.round(performance.now() - started) }, 'jobs done');
  };
}

/** Starts pg-boss's worker for one queue; returns its id. */
async function workQueue(
  boss: PgBoss,
  name: string,
  def: QueueDef,
  run: (batch: JobWithMetadata<object>[], tx?: BossDb) => Promise<void>,
  options: WorkerOptions,
  serverVersionNum: number,
): Promise<string> {
  const batchSize = def.batchSize ?? 1;
  const work = {
    batchSize,
    localConcurrency: def.localConcurrency ?? 1,
    ...(def.groupConcurrency ? { groupConcurrency: def.groupConcurrency } : {}),
    includeMetadata: true,
    pollingIntervalSeconds: options.pollingIntervalSeconds ?? 2,
    notifyPollingIntervalSeconds: options.pollingIntervalSeconds ?? 5,
    burstWhenBatchFull: batchSize > 1,
  } as const;
  // pg-boss's bound on the transaction is left off where the worker's session already holds it
  // (db-timeouts.ts bossBoundRedundant).
  const bound = bossBoundRedundant(def.expireInSeconds, serverVersionNum) ? { transactionTimeoutSeconds: 0 } : {};
  return def.transactional
    ? await boss.work(name, { ...work, transactional: true, ...bound }, (batch: JobWithMetadata<object>[], tx) =>
        run(batch, tx),
      )
    : await boss.work(name, work, (batch: JobWithMetadata<object>[]) => run(batch));
}

/**
 * The gone-worker reaper (src/jobs/claims/reaper.ts): transactional queues' claims are their locks,
 * the others' are the worker named on them.
 */
function startReaper(
  { db, boss, log }: { db: Knex; boss: PgBoss; log: Logger },
  registry: Registry,
  workers: { ids: Map<string, string>; key: number },
  tuning: WorkerOptions['claimReaper'],
): ClaimReaper {
  const named = (transactional: boolean) =>
    Object.entries(registry)
      .filter(([, def]) => Boolean(def.transactional) === transactional)
      .map(([name]) => name);
  return startClaimReaper(db, boss, log, {
    queues: named(true),
    workers: { queues: named(false), key: workers.key },
    wake: (queue) => {
      const id = workers.ids.get(queue);
      if (id) boss.notifyWorker(id);
    },
    ...tuning,
  });
}

export async function startWorker<R extends Registry>(
  config: Config,
  registry: R,
  handlers: Handlers<R>,
  options: WorkerOptions = {},
): Promise<WorkerHandle<R>> {
  assertHandlers(registry, handlers as Record<string, unknown>);
  const log = options.log ?? createLogger({ name: 'worker', level: config.LOG_LEVEL });
  const shares = connectionShares(config, 'worker');
  const db = createDb(config, { poolMax: shares.knex, applicationName: 'cairn-worker', role: 'worker' });
  const boss = createBoss(config, 'worker', { max: shares.boss, ...options.bossOptions });
  boss.on('error', (err: Error & { code?: string }) =>
    log.warn({ code: err.code, message: err.message }, 'pg-boss error'),
  );
  await boss.start();
  // Before any job is fetched: a job named with this key is taken over only once the key is free.
  const liveness = await startLiveness(config, log);
  const jobs = new Jobs(boss, registry);
  const stopping = new AbortController();
  const ctx: WorkerContext<R> = { config, db, jobs, log, store: createObjectStore(config), stopping: stopping.signal };

  const workerIds = new Map<string, string>();
  const nameJobs = jobNamer(db, log, liveness.key);
  const version = await db.raw<{ rows: { server_version_num: string }[] }>('show server_version_num');
  const serverVersionNum = Number(version.rows[0]!.server_version_num);
  for (const [name, def] of Object.entries(registry)) {
    const run = batchRunner(name, def, handlers[name as keyof R] as JobHandler, ctx, nameJobs);
    workerIds.set(name, await workQueue(boss, name, def, run, options, serverVersionNum));
  }
  for (const s of options.schedules ?? []) {
    await boss.schedule(s.queue, s.cron, s.data, { tz: 'UTC', key: s.key });
  }
  const reaper = startReaper({ db, boss, log }, registry, { ids: workerIds, key: liveness.key }, options.claimReaper);
  log.info({ queues: Object.keys(registry).length }, 'worker started');

  return {
    boss,
    jobs,
    db,
    async stop() {
      stopping.abort();
      await reaper.stop();
      await boss.stop({ graceful: true, timeout: options.stopTimeoutMs ?? 20_000, close: true });
      // Last: a job this worker could not finish in time is taken over by another within a second.
      await liveness.stop();
      await db.destroy();
    },
  };
}
