// `backups.capture`: one backup. Idempotent on the backup id; throws only while the
// environment is busy, so pg-boss retries it later.
import type { queues } from '../src/jobs.ts';
import { captureBackup } from '../src/domain/backups/capture.ts';
import type { JobHandler } from '../src/worker.ts';

export const backupsCapture: JobHandler<(typeof queues)['backups.capture']['schema']> = async (jobs, ctx) => {
  for (const job of jobs) await captureBackup(ctx, job.data.backup_id);
};
