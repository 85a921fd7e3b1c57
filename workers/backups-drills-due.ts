// `backups.drills-due`: the hourly cron that starts every restore drill that is due.
import type { queues } from '../src/queues.ts';
import { startDueDrills } from '../src/domain/backups/drills/request.ts';
import type { JobHandler } from '../src/worker.ts';

export const backupsDrillsDue: JobHandler<(typeof queues)['backups.drills-due']['schema']> = async (_jobs, ctx) => {
  const started = await startDueDrills({ db: ctx.db, jobs: ctx.jobs });
  if (started > 0) ctx.log.info({ started }, 'restore drills started');
};
