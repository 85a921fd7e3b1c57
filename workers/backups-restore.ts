// `backups.restore`: one restore operation. Idempotent on the operation id.
import type { queues } from '../src/queues.ts';
import { reapOrphans } from '../src/domain/backups/schedule/reap.ts';
import { runRestore } from '../src/domain/backups/restore/run.ts';
import type { JobHandler } from '../src/worker.ts';

export const backupsRestore: JobHandler<(typeof queues)['backups.restore']['schema']> = async (jobs, ctx) => {
  for (const job of jobs) {
    // A retry is most often a worker taken over within a second of dying (src/jobs/claims/takeover.ts):
    // its restore and pre-restore copy are settled now, and its temporary folder removed when it
    // is on this machine.
    if (job.retryCount > 0) await reapOrphans(ctx);
    await runRestore(ctx, job.data.operation_id);
  }
};
