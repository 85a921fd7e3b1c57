// `errors.ingest`: a fetch of jobs through parse → symbolicate → scrub → group → store (docs/api.md
// "Capture fields and capture rules"), on the transaction pg-boss settles the jobs in (domain/errors/queues.ts `transactional`).
// Every job is settled here, on that transaction: a job whose events are all stored is deleted
// with them (the queue never holds what is stored); a failed event of a job of several goes on as
// a job of its own, so one poison event never holds back or repeats its neighbours; a job of one
// failed event is failed, for pg-boss to retry with backoff; on the last attempt, or when it can
// never succeed, the event is dead-lettered with its error.
import { keyringFromConfig } from '../src/crypto.ts';
import { ingestEvents, type Failure, type IngestDeps, type JobEvent } from '../src/domain/errors/intake/ingest.ts';
import type { ingestJobSchema, IngestJob } from '../src/domain/errors/intake/job.ts';
import { SourceMapCache } from '../src/domain/errors/source-maps/cache.ts';
import { ulidTime } from '../src/ids.ts';
import { bumpPending, type PendingDeltas } from '../src/domain/errors/intake/queries.ts';
import { emitGroupEvents } from '../src/domain/errors/groups/events.ts';
import { fireAlerts, frequencyEnvs } from '../src/domain/alerts/fire/evaluate.ts';
import { RuleCache } from '../src/domain/alerts/fire/rule-cache.ts';
import { createPipelineCaches } from '../src/domain/errors/pipeline/caches.ts';
import { ensurePartitions } from '../src/domain/errors/retention/prune.ts';
import { indexMinified } from '../src/domain/errors/source-maps/scope-naming.ts';
import { sourceMapBucket } from '../src/domain/errors/source-maps/uploads.ts';
import type { MapLoader } from '../src/domain/errors/pipeline/symbolicate.ts';
import { deadLetterName } from '../src/jobs/index.ts';
import type { AppRegistry } from '../src/queues.ts';
import { readAll } from '../src/storage/object-store.ts';
import type { JobHandler, JobInput, WorkerContext } from '../src/worker.ts';
import type { Db as BossDb } from 'pg-boss';

const queue = 'errors.ingest';

export interface IngestWorkerOptions {
  /** Memory bound of the parsed source map cache. */
  mapCacheBytes: number;
  /** A map read that takes longer fails (the frame says `map_unavailable`); the S3 client has no timeout of its own. */
  mapLoadTimeoutMs: number;
  /** Processed JSON held before a store: a batch of large events is stored in parts. */
  maxStoreBytes: number;
}

export const ingestWorkerDefaults: IngestWorkerOptions = {
  mapCacheBytes: 32 * 1024 * 1024,
  mapLoadTimeoutMs: 30_000,
  maxStoreBytes: 4 * 1024 * 1024,
};

async function withTimeout<T>(ms: number, what: string, run: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([run(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads maps (and their minified files) from the object store through a cache under a memory bound. */
function mapLoader(ctx: WorkerContext, o: IngestWorkerOptions): MapLoader {
  const cache = new SourceMapCache(o.mapCacheBytes);
  const bucket = sourceMapBucket(ctx.config);
  const loadMap: MapLoader = (ref) =>
    cache.get(ref.sha256, ref.size_bytes, () =>
      withTimeout(o.mapLoadTimeoutMs, `reading source map ${ref.object_key}`, async () => {
        const object = await ctx.store.get(bucket, ref.object_key);
        if (!object) throw new Error(`source map object ${ref.object_key} is missing`);
        return (await readAll(object.body)).toString('utf8');
      }),
    );
  // A map's minified file is indexed once and kept with the parsed map (it leaves the cache with
  // it); a failed read is forgotten, so a later frame tries again, and the frame meanwhile is named
  // as it would be without the file.
  return async (ref) => {
    const entry = await loadMap(ref);
    const m = ref.minified;
    if (entry !== 'malformed' && m && !entry.minified.has(m.sha256)) {
      entry.minified.set(
        m.sha256,
        withTimeout(o.mapLoadTimeoutMs, `reading minified file ${m.object_key}`, async () => {
          const object = await ctx.store.get(bucket, m.object_key);
          return object ? indexMinified((await readAll(object.body)).toString('utf8'), ref.file) : null;
        }).catch((err: unknown) => {
          entry.minified.delete(m.sha256);
          ctx.log.warn(
            { err, object_key: m.object_key },
            'a minified file could not be read; its frames are named from the map alone',
          );
          return null;
        }),
      );
    }
    return entry;
  };
}

const jobOf = (e: JobEvent): IngestJob => ({
  events: [{ uid: e.uid, env_id: e.env_id, release: e.release, payload_sealed: e.payload_sealed }],
});

/** Settles every job of the batch on `tx` (see the top of this file). */
async function settle(ctx: WorkerContext, tx: BossDb, jobs: JobInput<IngestJob>[], failed: Failure[]): Promise<void> {
  const boss = ctx.jobs.boss;
  const byJob = Map.groupBy(failed, (f) => f.event.job);
  const done: string[] = [];
  const alone: { data: IngestJob; startAfter: number }[] = [];
  const dead: { data: IngestJob & { error: string } }[] = [];
  for (const job of jobs) {
    const failures = byJob.get(job.id) ?? [];
    if (
      failures.length === 1 &&
      job.data.events.length === 1 &&
      failures[0]!.outcome === 'retry' &&
      !failures[0]!.event.lastAttempt
    ) {
      await boss.fail(queue, job.id, { error: failures[0]!.error }, { db: tx });
      continue;
    }
    for (const f of failures) {
      if (f.outcome === 'bury' || f.event.lastAttempt) dead.push({ data: { ...jobOf(f.event), error: f.error } });
      else alone.push({ data: jobOf(f.event), startAfter: 1 });
    }
    done.push(job.id);
  }
  if (alone.length > 0) await boss.insert(queue, alone, { db: tx });
  if (dead.length > 0) await boss.insert(deadLetterName(queue), dead, { db: tx });
  // Fenced by pg-boss to this worker's claim: a job another worker has taken since is not deleted,
  // and the transaction (the store with it) then rolls back.
  if (done.length > 0) await boss.deleteJob(queue, done, { db: tx });
  // The deleted jobs' events are no longer pending (stored, dropped or dead-lettered), but for
  // those queued again on their own. Last, so the counter rows are locked only for the commit.
  const settled: PendingDeltas = new Map();
  const doneIds = new Set(done);
  for (const job of jobs)
    if (doneIds.has(job.id)) for (const e of job.data.events) settled.set(e.env_id, (settled.get(e.env_id) ?? 0) - 1);
  for (const { data } of alone) for (const e of data.events) settled.set(e.env_id, (settled.get(e.env_id) ?? 0) + 1);
  await bumpPending(tx, settled);
}

/** Postgres found no day partition of error_events for a row (SQLSTATE 23514). */
const isMissingPartition = (err: unknown): boolean =>
  (err as { code?: string }).code === '23514' && /no partition of relation/.test(String((err as Error).message));

/**
 * The batch's days had no partition (no release and no daily prune for a fortnight): they are made
 * once this transaction has rolled back (making a partition waits for the table's lock, which the
 * failed insert still holds), and the jobs' retry a second later finds them.
 */
function makeDaysFor(ctx: WorkerContext, events: JobEvent[]): void {
  // An event's day is its uid's moment (intake/ingest.ts), else its job's.
  const first = new Date(
    Math.min(...events.map((e) => ulidTime(e.uid.slice(6)) ?? new Date(e.receive_time).getTime())),
  );
  setImmediate(() => {
    ensurePartitions(ctx.db, new Date(), first).catch((err: unknown) =>
      ctx.log.error({ err }, 'could not make the day partitions of error_events'),
    );
  });
}

/** `given`: a keyring or map loader of the caller's instead of the worker's own (tests). */
export function errorsIngest(
  options: Partial<IngestWorkerOptions> = {},
  given: Partial<Pick<IngestDeps, 'keyring' | 'load'>> = {},
): JobHandler<typeof ingestJobSchema, AppRegistry> {
  const o = { ...ingestWorkerDefaults, ...options };
  // One set per worker: parsed maps, compiled policies and ready stacks are reused across batches,
  // each under a memory bound. Keyed by the worker's pool, so a process that starts a second
  // worker after the first stopped (tests do) never reaches the stopped one's pool through them.
  const perWorker = new WeakMap<object, IngestDeps>();
  // The environments' alert rules, read at most once a second per worker (rule-cache.ts).
  const ruleCaches = new WeakMap<object, RuleCache>();
  return async (jobs, ctx, tx) => {
    if (!tx) throw new Error(`${queue} must run transactional (domain/errors/queues.ts)`);
    let deps = perWorker.get(ctx.db);
    if (!deps) {
      deps = {
        db: ctx.db,
        keyring: given.keyring ?? keyringFromConfig(ctx.config),
        load: given.load ?? mapLoader(ctx, o),
        caches: createPipelineCaches(),
      };
      perWorker.set(ctx.db, deps);
    }
    const events: JobEvent[] = jobs.flatMap((j) =>
      j.data.events.map((e) => ({
        ...e,
        job: j.id,
        receive_time: j.createdOn,
        lastAttempt: j.retryCount >= j.retryLimit,
      })),
    );
    let rules = ruleCaches.get(ctx.db);
    if (!rules) ruleCaches.set(ctx.db, (rules = new RuleCache()));
    const envRules = await rules.rulesOf(tx, [...new Set(events.map((e) => e.env_id))]);
    // Groups of environments with a frequency rule keep per-minute counts, added by the store.
    const options = { maxStoreBytes: o.maxStoreBytes, minuteEnvs: frequencyEnvs(envRules) };
    const r = await ingestEvents(deps, tx, events, options).catch((err: unknown) => {
      if (isMissingPartition(err)) makeDaysFor(ctx as WorkerContext, events);
      throw err;
    });
    if (r.failed.length > 0) {
      ctx.log.error(
        { uids: r.failed.map((f) => f.event.uid), error: r.failed[0]!.error },
        'error events failed to process; they will be retried, or dead-lettered after the last attempt',
      );
    }
    if (r.dropped > 0) ctx.log.warn({ dropped: r.dropped }, 'error events of deleted environments were dropped');
    await emitGroupEvents(tx, ctx.jobs, r.changed);
    // On the same transaction: a firing is recorded exactly when its events are stored.
    const fired = await fireAlerts(
      { db: ctx.db, jobs: ctx.jobs, baseUrl: ctx.config.CAIRN_BASE_URL, log: ctx.log },
      tx,
      envRules,
      r,
    );
    if (fired > 0) ctx.log.info({ fired }, 'alert rules fired');
    await settle(ctx as WorkerContext, tx, jobs, r.failed);
    ctx.log.debug({ jobs: jobs.length, stored: r.stored }, 'error events stored');
  };
}
