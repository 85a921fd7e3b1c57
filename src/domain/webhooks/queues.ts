// Webhooks' queues and their schedules, assembled with the others in src/queues.ts.
import { z } from 'zod';
import { defineQueue, type Jobs, type QueueOptions, type QueueName, type ScheduleDef } from '../../jobs/index.ts';

/** One attempt of one webhook delivery, in either lane. */
const deliveryAttempt = z.object({
  endpoint_id: z.string().regex(/^whep_[0-9a-z]{26}$/),
  message_id: z.string().regex(/^whmsg_[0-9a-z]{26}$/),
  attempt: z.number().int().min(1),
});

/** What both lanes of delivery attempts keep alike. */
const deliveryAttempts = {
  partition: true,
  retryLimit: 10,
  retryDelay: 5,
  retryDelayMax: 300,
  expireInSeconds: 120,
  heartbeatSeconds: 10,
  // Longer than the retry schedule (27.6 h): an attempt's job id stays taken while its delivery
  // can still ask for it, so it is never queued twice.
  deleteAfterSeconds: 3 * 24 * 3600,
} satisfies QueueOptions;

/**
 * Attempts of one environment's slow-lane endpoints running at once, on every worker together:
 * the queue's group limit, held exactly by the attempts themselves (deliveries/batch.ts).
 */
export const slowLaneEnvLimit = 2;

export const webhookQueues = {
  // One job per attempt of one delivery, queued in the transaction
  // that wrote the event or settled the attempt before; a failed attempt queues the next itself
  // at the contract's schedule (schedule.ts), so pg-boss's own retries are only for a worker that
  // died or a database that failed mid-job (the attempt is then made again, same webhook-id). A
  // killed worker's attempts are taken over within ~1-3 s (src/jobs/claims/takeover.ts), a frozen one's
  // by the heartbeat within 10-20 s. Its own partition: a burst of
  // events waits here without slowing the other queues. The endpoint is the job's group: at most 16
  // attempts to one endpoint at once. Fetches of 16, sent together, with burst (a full fetch
  // fetches again at once), 4 fetch loops: a fetch's statements (the fetch, naming its jobs, their
  // contexts, the settle, the completion) are shared by 16 deliveries, which cut a delivery's CPU
  // from 4.8 to 3.0 ms (worker and Postgres; bench/webhooks.ts: 206 → 315-357 deliveries/s to one
  // endpoint), against fetches of 4 and 4 at a time per endpoint. Fetches of 1 drained ~1/s, every
  // worker sleeping out the 5 s poll after each job. A fetch ends with its slowest attempt, so only endpoints
  // that answer 2xx within a second wait here: an attempt that fails or takes longer moves its
  // endpoint to the slow lane below, and a new endpoint starts there. What a receiver that turns
  // slow can still hold is its attempts a worker already fetched (16 at once), for one timeout: the
  // rest of its queued attempts move to the slow lane with it (domain/webhooks/lanes.ts).
  ...defineQueue('webhooks.deliver', deliveryAttempt, {
    ...deliveryAttempts,
    batchSize: 16,
    localConcurrency: 4,
    groupConcurrency: 16,
  }),
  // The slow lane (domain/webhooks/emit.ts): attempts to endpoints that are new, failing or slow
  // to answer. One attempt per fetch, so none waits behind another's timeout; the environment is
  // the group, so one tenant's dead receivers hold at most 2 attempts at once, on every worker together.
  ...defineQueue('webhooks.deliver-slow', deliveryAttempt, {
    ...deliveryAttempts,
    batchSize: 1,
    localConcurrency: 4,
    groupConcurrency: slowLaneEnvLimit,
  }),
  // Daily: deliveries and their attempts past 30 days, and messages no delivery needs.
  ...defineQueue('webhooks.prune', z.object({}), { retryLimit: 2 }),
  // Every 10 minutes: deliveries whose job is gone queued again (domain/webhooks/sweep.ts).
  ...defineQueue('webhooks.sweep', z.object({}), { retryLimit: 1, deleteAfterSeconds: 3600 }),
};

export const webhookSchedules: ScheduleDef<QueueName<typeof webhookQueues>>[] = [
  { queue: 'webhooks.prune', key: 'daily', cron: '37 4 * * *', data: {} },
  { queue: 'webhooks.sweep', key: 'every-10-min', cron: '*/10 * * * *', data: {} },
];

/** Jobs for webhooks' queues. */
export type WebhookJobs = Jobs<typeof webhookQueues>;
