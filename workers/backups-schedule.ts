// `backups.schedule`: a cron slot (daily, weekly or monthly) → one backup per environment.
import type { queues } from '../src/queues.ts';
import { scheduleSlot } from '../src/domain/backups/schedule/slots.ts';
import type { JobHandler } from '../src/worker.ts';

export const backupsSchedule: JobHandler<(typeof queues)['backups.schedule']['schema']> = async (jobs, ctx) => {
  for (const job of jobs) {
    // When the cron fired (pg-boss creates the job then), not when this ran: a late or retried
    // job still fills its own hour's slot.
    const created = await scheduleSlot(ctx, ctx.jobs, job.data.type, job.createdOn);
    ctx.log.info({ type: job.data.type, created }, 'scheduled backups');
  }
};
