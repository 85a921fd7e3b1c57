// The application's queues: each feature's, declared beside its code, in one registry. The web
// queues jobs on it, the worker works every queue of it (`workers/handlers.ts` must hold a handler
// for each, or the worker refuses to start), the release phase creates its queues (src/migrate.ts)
// and the CLI reads their state. The queue runtime itself (src/jobs/) knows no feature.
import { alertQueues, alertSchedules } from './domain/alerts/queues.ts';
import { backupQueues, backupSchedules } from './domain/backups/queues.ts';
import { errorQueues, errorSchedules } from './domain/errors/queues.ts';
import { identityQueues, identitySchedules } from './domain/identity/queues.ts';
import { webhookQueues, webhookSchedules } from './domain/webhooks/queues.ts';
import { defineQueues, type Jobs, type QueueName, type ScheduleDef } from './jobs/index.ts';
import { mailQueues, mailSchedules } from './mail/queues.ts';

export const queues = defineQueues({
  ...errorQueues,
  ...identityQueues,
  ...mailQueues,
  ...backupQueues,
  ...webhookQueues,
  ...alertQueues,
});

export type AppRegistry = typeof queues;

/** Jobs for every queue of the application. */
export type AppJobs = Jobs<AppRegistry>;

/** Cron schedules (UTC), registered by every worker at start. */
export const schedules: ScheduleDef<QueueName<AppRegistry>>[] = [
  ...errorSchedules,
  ...identitySchedules,
  ...mailSchedules,
  ...backupSchedules,
  ...webhookSchedules,
  ...alertSchedules,
];
