// `errors.ingest`: drains the error inbox through parse → symbolicate → scrub → group → store
// (SPEC.md worker steps). Not a pg-boss queue: the inbox is the queue. Each loop claims a batch under a lease,
// processes it and stores it in one statement (src/domain/observability/intake/ingest.ts); two loops per
// process overlap one batch's processing (CPU here) with another's store (CPU in Postgres).
// A worker killed mid-batch leaves its rows leased; any worker claims them again when the lease
// runs out, and the store step is idempotent on the uid.
//
// Wake-ups: the inbox's INSERT trigger NOTIFYs `cairn_error_inbox`, so an idle loop starts at once;
// a short poll still runs, for retry delays and leases that run out (both become due silently).
import pg from 'pg';
import { keyringFromConfig } from '../src/crypto.ts';
import { ingestNext, type IngestDeps, type IngestOptions } from '../src/domain/observability/intake/ingest.ts';
import { SourceMapCache } from '../src/domain/observability/source-maps/cache.ts';
import { indexMinified } from '../src/domain/observability/source-maps/scope-naming.ts';
import { sourceMapBucket } from '../src/domain/observability/source-maps/uploads.ts';
import type { MapLoader } from '../src/domain/observability/pipeline/symbolicate.ts';
import { readAll } from '../src/storage/object-store.ts';
import type { WorkerContext, WorkerService } from '../src/worker.ts';

export interface IngestLoopOptions extends IngestOptions {
  /** Events claimed per batch. */
  batchSize: number;
  /** Loops per process; 2 overlaps processing with storing. */
  concurrency: number;
  /** How long a claimed batch is a worker's before others may take it (longer than any batch takes). */
  leaseSeconds: number;
  /** Poll when nothing woke the loop. */
  pollMs: number;
  /** Memory bound of the parsed source map cache. */
  mapCacheBytes: number;
  /** A map read that takes longer fails (the frame says `map_unavailable`); the S3 client has no timeout of its own. */
  mapLoadTimeoutMs: number;
}

export const ingestLoopDefaults: IngestLoopOptions = {
  batchSize: 200,
  concurrency: 2,
  leaseSeconds: 60,
  pollMs: 1000,
  maxAttempts: 10,
  mapCacheBytes: 32 * 1024 * 1024,
  mapLoadTimeoutMs: 30_000,
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

export const inboxChannel = 'cairn_error_inbox';

/** Resolves waiters on `notify`, on a timeout, or when stopped; a notify before the wait counts. */
class Wake {
  private generation = 0;
  private waiters: (() => void)[] = [];

  get seen(): number {
    return this.generation;
  }

  notify(): void {
    this.generation += 1;
    for (const w of this.waiters.splice(0)) w();
  }

  wait(since: number, ms: number): Promise<void> {
    if (since !== this.generation) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve();
      }, ms);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      this.waiters.push(done);
    });
  }
}

/** LISTENs on its own connection, reconnecting after a failure; polling covers the gap. */
function listen(ctx: WorkerContext, wake: Wake, isStopping: () => boolean): { close(): Promise<void> } {
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    const c = new pg.Client({
      connectionString: ctx.config.DATABASE_URL,
      application_name: 'cairn-worker-listen',
      keepAlive: true,
    });
    c.on('notification', () => wake.notify());
    c.on('error', (err) => {
      ctx.log.warn({ message: err.message }, 'error inbox listener lost; reconnecting');
      void c.end().catch(() => undefined);
      if (client === c) client = undefined;
      if (!isStopping()) retry = setTimeout(() => void connect(), 1000);
    });
    try {
      await c.connect();
      await c.query(`listen ${inboxChannel}`);
      if (isStopping()) {
        await c.end();
        return;
      }
      client = c;
      wake.notify(); // events may have arrived while not listening
    } catch (err) {
      ctx.log.warn({ message: (err as Error).message }, 'error inbox listener failed to connect; retrying');
      void c.end().catch(() => undefined);
      if (!isStopping()) retry = setTimeout(() => void connect(), 1000);
    }
  };
  void connect();
  return {
    async close() {
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}

export function errorsIngest(options: Partial<IngestLoopOptions> = {}): WorkerService {
  const o = { ...ingestLoopDefaults, ...options };
  return {
    name: 'errors.ingest',
    async start(ctx) {
      // One per worker process: parsed maps are reused across batches, under a memory bound.
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
      const load: MapLoader = async (ref) => {
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
      const deps: IngestDeps = { db: ctx.db, keyring: keyringFromConfig(ctx.config), load };
      const wake = new Wake();
      let stopping = false;
      const listener = listen(ctx, wake, () => stopping);

      const loop = async () => {
        let failures = 0;
        while (!stopping) {
          const since = wake.seen;
          let claimed: number;
          try {
            const r = await ingestNext(deps, o.batchSize, o.leaseSeconds, o);
            claimed = r.claimed;
            failures = 0;
            if (r.failed.length > 0) {
              ctx.log.error(
                { uids: r.failed.map((f) => f.uid), err: r.failed[0]!.error },
                'error events failed to process; they will be retried',
              );
            }
            if (r.claimed > 0) ctx.log.debug({ claimed: r.claimed, stored: r.stored }, 'error events stored');
          } catch (err) {
            // The store is away or the statement failed: the claimed rows wait out their lease.
            failures += 1;
            ctx.log.warn({ err }, 'error inbox batch failed; its events will be claimed again');
            await wake.wait(wake.seen, Math.min(30_000, 500 * 2 ** failures));
            continue;
          }
          // Anything claimed: more may be waiting (a byte budget can cut a batch short), so go on.
          if (claimed === 0 && !stopping) await wake.wait(since, o.pollMs);
        }
      };
      const loops = Array.from({ length: o.concurrency }, loop);
      return {
        async stop() {
          stopping = true;
          wake.notify();
          await Promise.all(loops);
          await listener.close();
        },
      };
    },
  };
}
