// `backups.schedule`: a cron slot (daily, weekly or monthly) → one backup per environment.
import type { queues } from '../src/jobs.ts';
import { scheduleSlot } from '../src/domain/backups/maintenance.ts';
import type { JobHandler } from '../src/worker.ts';

export const backupsSchedule: JobHandler<(typeof queues)['backups.schedule']['schema']> = async (jobs, ctx) => {
  for (const job of jobs) {
    const created = await scheduleSlot(ctx, ctx.jobs, job.data.type, new Date());
    ctx.log.info({ type: job.data.type, created }, 'scheduled backups');
  }
};
