// Identity's queues and their schedule, assembled with the others in src/queues.ts.
import { z } from 'zod';
import { defineQueue, type Jobs, type QueueName, type ScheduleDef } from '../../jobs/index.ts';

export const identityQueues = {
  // A sign-up job carries only the pending row's id: the password waits there,
  // sealed, and is erased once hashed. Handlers key their writes on the ids, so retries are safe.
  // Batches with burst: a queue of sign-ups drains without waiting a poll interval between jobs.
  ...defineQueue('identity.sign-up', z.object({ pending_id: z.string().regex(/^signup_[0-9a-z]{26}$/) }), {
    retryLimit: 8,
    retryDelay: 1,
    deleteAfterSeconds: 3600,
    batchSize: 10,
    localConcurrency: 2,
  }),
  ...defineQueue(
    'identity.password-reset',
    z.object({ env_id: z.string(), email: z.string().max(320), redirect_url: z.string().max(2048).optional() }),
    { retryLimit: 8, retryDelay: 1, deleteAfterSeconds: 3600, batchSize: 10 },
  ),
  ...defineQueue('identity.breached-import', z.object({ import_id: z.string() }), {
    retryLimit: 2,
    expireInSeconds: 3600,
  }),
  // Daily: sign-in history older than 90 days, ended sessions, spent tickets and links.
  ...defineQueue('identity.prune', z.object({}), { retryLimit: 2 }),
};

export const identitySchedules: ScheduleDef<QueueName<typeof identityQueues>>[] = [
  { queue: 'identity.prune', key: 'daily', cron: '17 4 * * *', data: {} },
];

/** Jobs for identity's queues. */
export type IdentityJobs = Jobs<typeof identityQueues>;
