// Error tracking's queues and their schedules (docs/queues.md), assembled with the others in
// src/queues.ts.
import { z } from 'zod';
import { defineQueue, type Jobs, type QueueName, type ScheduleDef } from '../../jobs/index.ts';
import { ingestJobSchema } from './intake/job.ts';

export const errorQueues = {
  // Error ingest (docs/queues.md). A job carries up to 50 accepted events, sealed (never
  // plaintext; domain/errors/intake/job.ts), so a fetch of 4 jobs is a bounded batch. Its
  // own partition keeps the busiest queue from slowing the others. The store commits with the
  // jobs' settlement (transactional), so each event is stored exactly once even when a job's claim
  // ran out while it was being worked. A killed worker's jobs are retried by another worker within
  // ~3 s (its claim locks free when its connections close, src/jobs/claims/), a frozen one's by the
  // heartbeat within ~10-20 s, never after a long expiry. Ten attempts with backoff up to 5 minutes (a source map store
  // outage is waited out), then the dead-letter queue, kept 30 days like every other. Stored jobs
  // are deleted in the store's transaction, so the queue never holds events already stored.
  ...defineQueue('errors.ingest', ingestJobSchema, {
    partition: true,
    retryLimit: 9,
    retryDelay: 1,
    retryDelayMax: 300,
    expireInSeconds: 15 * 60,
    heartbeatSeconds: 10,
    // Only failed jobs remain to be deleted (their events are in the dead-letter queue by then).
    deleteAfterSeconds: 3600,
    // Two fetches of 4 jobs in flight: at most ~400 events, as many as the worker held before the
    // move to pg-boss. Fetches of 16 held its peak RSS ~17 MB higher (314 against 297 MB in
    // bench/errors.ts's memory part, 50 releases' maps) for no more events/s.
    batchSize: 4,
    localConcurrency: 2,
    transactional: true,
  }),
  // sentry-cli's artifact bundles (domain/errors/sentry/cli/assemble.ts): the bundle's
  // chunks read from the store, its maps and minified files stored. Idempotent on the assembly's
  // row; a store outage is waited out with backoff.
  ...defineQueue(
    'errors.assemble-bundle',
    z.object({ env_id: z.string(), checksum: z.string().regex(/^[0-9a-f]{40}$/) }),
    { retryLimit: 8, retryDelay: 2, expireInSeconds: 600, deleteAfterSeconds: 3600 },
  ),
  // Daily: accepted event ids past their 90-day retention (domain/errors/intake/event-ids.ts).
  ...defineQueue('errors.prune', z.object({}), { retryLimit: 2 }),
  // Every 5 minutes: each environment's pending count set to the events its queue holds
  // (intake/queries.ts reconcilePending). Deltas add unclamped, so a count a web process died before
  // writing (or a redrive's) would otherwise stay low until the daily prune: a 50,000 deficit let
  // 150,000 pend before captures were refused. Not on the worker's decrement: a count below zero
  // there is also the usual brief race (a worker stored a commit's events before the web counted
  // them) and set right there, the web's later count would stay as phantom events.
  ...defineQueue('errors.reconcile-pending', z.object({}), {
    retryLimit: 0,
    expireInSeconds: 600,
    deleteAfterSeconds: 3600,
  }),
  // Once, after the release that made the store keep groups' tags and users: those of events
  // stored before (domain/errors/facets/backfill.ts). Queued by each release until it is done;
  // batches commit with their cursor, so a run stopped or killed midway is retried from there.
  ...defineQueue('errors.backfill-facets', z.object({}), {
    retryLimit: 20,
    retryDelay: 10,
    expireInSeconds: 6 * 3600,
    heartbeatSeconds: 30,
    deleteAfterSeconds: 3600,
  }),
  // Every minute (pg-boss's clock sends each cron job once, whatever the number of workers): the
  // intake's table vacuumed when autovacuum has left it (intake/vacuum.ts).
  ...defineQueue('errors.vacuum', z.object({}), { retryLimit: 0, expireInSeconds: 600, deleteAfterSeconds: 3600 }),
};

export const errorSchedules: ScheduleDef<QueueName<typeof errorQueues>>[] = [
  { queue: 'errors.prune', key: 'daily', cron: '23 4 * * *', data: {} },
  { queue: 'errors.vacuum', key: 'every-minute', cron: '* * * * *', data: {} },
  { queue: 'errors.reconcile-pending', key: 'every-5-min', cron: '*/5 * * * *', data: {} },
];

/** Jobs for error tracking's queues. */
export type ErrorJobs = Jobs<typeof errorQueues>;
