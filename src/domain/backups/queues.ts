// Backups' queues and their schedules, assembled with the others in src/queues.ts.
import { z } from 'zod';
import { defineQueue, type Jobs, type QueueOptions, type QueueName, type ScheduleDef } from '../../jobs/index.ts';

/** A backup's run, or a restore's: as long as a dump or a restore may take. */
const longRun = {
  retryLimit: 40,
  retryDelay: 15,
  retryDelayMax: 300,
  expireInSeconds: 24 * 3600,
  heartbeatSeconds: 120,
} satisfies QueueOptions;

const operationId = z.object({ operation_id: z.string().regex(/^op_[0-9a-z]{26}$/) });

export const backupQueues = {
  // Capture and restore carry only ids; each takes its environment's advisory
  // lock and throws while another run holds it, so retries (with backoff) wait their turn. A dump
  // may run for hours: a killed worker's job is taken over within ~1-3 s (src/jobs/claims/takeover.ts),
  // a frozen one's by the heartbeat (within about two minutes), never by the expiry; the
  // redelivered job settles the orphan and cleans the bucket at once (backups.reap, if need be). The expiry is pg-boss's maximum, 24 h, the longest a single run may take.
  ...defineQueue('backups.capture', z.object({ backup_id: z.string().regex(/^backup_[0-9a-z]{26}$/) }), longRun),
  ...defineQueue('backups.restore', operationId, longRun),
  // A drill restores into its own scratch database, so it takes no environment lock; the same
  // takeover finds a killed worker's drill, which then runs again from the start.
  ...defineQueue('backups.drill', operationId, {
    retryLimit: 5,
    retryDelay: 60,
    expireInSeconds: 24 * 3600,
    heartbeatSeconds: 120,
  }),
  ...defineQueue('backups.drills-due', z.object({}), { retryLimit: 2 }),
  ...defineQueue('backups.schedule', z.object({ type: z.enum(['daily', 'weekly', 'monthly']) }), { retryLimit: 5 }),
  ...defineQueue('backups.prune', z.object({}), { retryLimit: 2 }),
  ...defineQueue('backups.reap', z.object({}), { retryLimit: 1 }),
};

export const backupSchedules: ScheduleDef<QueueName<typeof backupQueues>>[] = [
  // Daily, weekly on Sunday, monthly on the 1st, at 03:00 UTC unless an
  // environment chose another hour (`cairn backups schedule --at`): every hour, each slot takes the
  // environments whose hour it is (domain/backups/maintenance.ts scheduleSlot).
  { queue: 'backups.schedule', key: 'daily', cron: '0 * * * *', data: { type: 'daily' } },
  { queue: 'backups.schedule', key: 'weekly', cron: '0 * * * 0', data: { type: 'weekly' } },
  { queue: 'backups.schedule', key: 'monthly', cron: '0 * 1 * *', data: { type: 'monthly' } },
  { queue: 'backups.prune', key: 'hourly', cron: '41 * * * *', data: {} },
  { queue: 'backups.reap', key: 'every-5-min', cron: '*/5 * * * *', data: {} },
  { queue: 'backups.drills-due', key: 'hourly', cron: '29 * * * *', data: {} },
];

/** Jobs for backups' queues. */
export type BackupJobs = Jobs<typeof backupQueues>;
