// The `errors.ingest` job (errors/queues.ts): a group of accepted events, each sealed with the plain
// columns its seal is bound to (sealed-payload.ts). A capture request's events are packed into
// jobs of at most `jobLimits` so that a worker's fetch of `batchSize` jobs is a bounded batch
// (pg-boss fetches by job count, never by bytes): 4 jobs of at most 32 KB sealed is at most
// 128 KB, plus an event larger than that alone in its own job. A job of 50 ordinary events keeps
// pg-boss's per-job cost (~0.1 ms to fetch and settle, docs/queues.md) off the per-event path.
import { z } from 'zod';
import type { SealedPayloadRow } from './sealed-payload.ts';

/** A sealed event as it travels in a job: exactly the row its seal is bound to. */
export const sealedEvent = z.object({
  uid: z.string().regex(/^err_[0-9a-z]+$/),
  env_id: z.string(),
  release: z.string().nullable(),
  payload_sealed: z.string(),
}) satisfies z.ZodType<SealedPayloadRow>;

export const ingestJobSchema = z.object({ events: z.array(sealedEvent).min(1) });

export type IngestJob = z.infer<typeof ingestJobSchema>;

export const jobLimits = { events: 50, sealedBytes: 32 * 1024 };

/** Packs rows, in order, into jobs within `jobLimits` (an event over the byte limit goes alone). */
export function packJobs(rows: SealedPayloadRow[], limits = jobLimits): IngestJob[] {
  const jobs: IngestJob[] = [];
  let current: SealedPayloadRow[] = [];
  let bytes = 0;
  for (const r of rows) {
    const size = r.payload_sealed.length;
    if (current.length > 0 && (current.length >= limits.events || bytes + size > limits.sealedBytes)) {
      jobs.push({ events: current });
      current = [];
      bytes = 0;
    }
    current.push({ uid: r.uid, env_id: r.env_id, release: r.release, payload_sealed: r.payload_sealed });
    bytes += size;
  }
  if (current.length > 0) jobs.push({ events: current });
  return jobs;
}
