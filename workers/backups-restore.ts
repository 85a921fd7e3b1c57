// `backups.restore`: one restore operation. Idempotent on the operation id.
import type { queues } from '../src/jobs.ts';
import { runRestore } from '../src/domain/backups/restore.ts';
import type { JobHandler } from '../src/worker.ts';

export const backupsRestore: JobHandler<(typeof queues)['backups.restore']['schema']> = async (jobs, ctx) => {
  for (const job of jobs) await runRestore(ctx, job.data.operation_id);
};
