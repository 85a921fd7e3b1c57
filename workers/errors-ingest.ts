// `errors.ingest`: a batch of accepted events through parse → symbolicate → scrub → group → store
// (issue 3). Idempotent on the uid (see src/domain/observability/ingest.ts). An event whose
// processing throws fails its own job only; the rest of the batch is stored.
import { ingestBatch } from '../src/domain/observability/ingest.ts';
import { SourceMapCache } from '../src/domain/observability/source-map-cache.ts';
import { sourceMapBucket } from '../src/domain/observability/source-maps.ts';
import type { MapLoader } from '../src/domain/observability/symbolicate.ts';
import type { queues } from '../src/jobs.ts';
import { readAll } from '../src/storage/object-store.ts';
import type { JobHandler } from '../src/worker.ts';

/** One per worker process: parsed maps are reused across batches, under a memory bound. */
export const sourceMapCache = new SourceMapCache();

export const errorsIngest: JobHandler<(typeof queues)['errors.ingest']['schema']> = async (jobs, ctx) => {
  const bucket = sourceMapBucket(ctx.config);
  const load: MapLoader = (ref) =>
    sourceMapCache.get(ref.sha256, ref.size_bytes, async () => {
      const object = await ctx.store.get(bucket, ref.object_key);
      if (!object) throw new Error(`source map object ${ref.object_key} is missing`);
      return (await readAll(object.body)).toString('utf8');
    });
  const result = await ingestBatch(ctx.db, jobs.map((j) => j.data.uid), load);
  if (result.failed.length > 0) {
    const failed = new Set(result.failed.map((f) => f.uid));
    const ids = jobs.filter((j) => failed.has(j.data.uid)).map((j) => j.id);
    ctx.log.error({ uids: [...failed], err: result.failed[0]!.error }, 'error events failed to process; their jobs will retry');
    await ctx.jobs.boss.fail('errors.ingest', ids, { message: 'processing failed' });
  }
  ctx.log.debug({ jobs: jobs.length, stored: result.stored }, 'error events stored');
};
