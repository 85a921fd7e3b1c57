// `backups.capture`: one backup. Idempotent on the backup id; throws only while the
// environment is busy, so pg-boss retries it later.
import type { queues } from '../src/queues.ts';
import { captureBackup } from '../src/domain/backups/capture/capture.ts';
import { reapOrphans } from '../src/domain/backups/schedule/reap.ts';
import type { JobHandler } from '../src/worker.ts';

export const backupsCapture: JobHandler<(typeof queues)['backups.capture']['schema']> = async (jobs, ctx) => {
  for (const job of jobs) {
    // A retry is most often a worker taken over within a second of dying (src/jobs/claims/takeover.ts):
    // its runs, the pre-restore copies that have no job of their own among them, are settled now.
    if (job.retryCount > 0) await reapOrphans(ctx);
    await captureBackup(ctx, job.data.backup_id);
  }
};
