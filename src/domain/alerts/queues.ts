// Alerts' queues and their schedule, assembled with the others in src/queues.ts.
import { z } from 'zod';
import { defineQueue, type Jobs, type QueueName, type ScheduleDef } from '../../jobs/index.ts';

export const alertQueues = {
  // One job per firing, queued on the worker's store transaction with the firing
  // (fire/evaluate.ts); it sends its actions' mails and Slack messages and records each action's
  // outcome (send/send.ts). A failed send is retried by pg-boss with backoff, only the actions
  // still pending: 15 s doubling (with jitter) up to 15 min, 9 attempts over about an hour, then
  // such an action is `failed` with its last error.
  // At least once: a worker killed mid-send has its job taken over within ~1-3 s
  // (src/jobs/claims/), and the message goes out again; the firing stays recorded once. A send
  // waits at most 10 s for its receiver, and a firing's (at most 5) actions are sent side by side, so
  // the claim's expiry is well beyond one attempt.
  ...defineQueue(
    'alerts.send',
    z.object({
      firing_id: z.string().regex(/^alf_[0-9a-z]{26}$/),
      // Jobs queued one per (firing, action) before jobs were one per firing: that action only.
      action_index: z.number().int().min(0).optional(),
    }),
    {
      retryLimit: 8,
      retryDelay: 15,
      retryBackoff: true,
      retryDelayMax: 900,
      expireInSeconds: 120,
      // Longer than the retries: an action's job stays visible while it can still be retried.
      deleteAfterSeconds: 24 * 3600,
      // Fetches of 16 firings, 2 at once (at most 32 firings' sends in flight per worker), sent
      // together, each settled as its own job (workers/alerts-send.ts); a full fetch fetches again
      // at once. With fetches of 1 every fetch slept out the poll (2 s), so a burst of firings (500
      // in bench/errors.ts) went out at ~2 a second per worker; fetches of 16 spread pg-boss's
      // per-fetch statements (fetch, claim, completion) over more firings than fetches of 4.
      batchSize: 16,
      localConcurrency: 2,
    },
  ),
  // Hourly: firings past their 30 days, snoozes past their time, per-minute counts past the
  // longest window (a day): send/prune.ts.
  ...defineQueue('alerts.prune', z.object({}), { retryLimit: 2, deleteAfterSeconds: 3600 }),
};

export const alertSchedules: ScheduleDef<QueueName<typeof alertQueues>>[] = [
  { queue: 'alerts.prune', key: 'hourly', cron: '41 * * * *', data: {} },
];

/** Jobs for alerts' queues. */
export type AlertJobs = Jobs<typeof alertQueues>;
