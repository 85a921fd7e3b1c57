// `system.ping`: proves the queue pipeline end to end (enqueue → NOTIFY → worker → complete).
import type { JobHandler } from '../src/worker.ts';
import type { queues } from '../src/jobs.ts';

export const systemPing: JobHandler<(typeof queues)['system.ping']['schema']> = async (jobs, ctx) => {
  for (const job of jobs) ctx.log.info({ job_id: job.id, note: job.data.note }, 'pong');
};
