// Alerts' queues and their schedule, assembled with the others in src/queues.ts.
import { z } from 'zod';
import { defineQueue, type Jobs, type QueueName, type ScheduleDef } from '../../jobs/index.ts';

/** Firings per send job: a stored batch's firings go in jobs of this many. */
export const firingsPerJob = 20;

export const alertQueues = {
  // One job per stored batch's firings (up to `firingsPerJob`), queued on the worker's store
  // transaction with them (fire/evaluate.ts); it sends their actions' mails and Slack messages and
  // records each action's outcome (send/send.ts). A failed send is retried by pg-boss with backoff,
  // only the actions still pending (the others' outcomes are recorded, so a retry sends nothing
  // twice): 15 s doubling (with jitter) up to 15 min, 9 attempts over about an hour, then such an
  // action is `failed` with its last error.
  // At least once: a worker killed mid-send has its job taken over within ~1-3 s
  // (src/jobs/claims/), and what was not yet recorded as sent goes out again; the firings stay
  // recorded once. A Slack post waits at most 10 s for its receiver, 32 side by side, and mails go
  // 8 at a time: the claim's expiry is beyond a fetch's (at most 2 jobs of 20 firings of 5
  // actions) on a slow mail server.
  // Jobs per batch rather than per firing: a firing's own job (insert, fetch, claim, completion of
  // a pg-boss row) cost more than evaluating the rules that made it (bench/errors.ts).
  ...defineQueue(
    'alerts.send',
    z.object({
      firing_ids: z
        .array(z.string().regex(/^alf_[0-9a-z]{26}$/))
        .min(1)
        .max(firingsPerJob)
        .optional(),
      // Jobs queued one per firing (before jobs carried a batch's), and one per (firing, action)
      // before that: that firing, that action only.
      firing_id: z
        .string()
        .regex(/^alf_[0-9a-z]{26}$/)
        .optional(),
      action_index: z.number().int().min(0).optional(),
    }),
    {
      retryLimit: 8,
      retryDelay: 15,
      retryBackoff: true,
      retryDelayMax: 900,
      // Only a frozen worker's backstop (a killed one's jobs are taken over within seconds):
      // long enough for a slow mail server's 200 mails, 8 at a time.
      expireInSeconds: 900,
      // Longer than the retries: an action's job stays visible while it can still be retried.
      deleteAfterSeconds: 24 * 3600,
      // Fetches of 2 jobs, 2 at once, sent together, each settled as its own job
      // (workers/alerts-send.ts); a full fetch fetches again at once, rather than sleep out the poll.
      batchSize: 2,
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
