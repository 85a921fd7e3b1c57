// `backups.drill`: one restore drill (src/domain/backups/drills/drill.ts). Idempotent on the operation id.
import type { queues } from '../src/queues.ts';
import { runDrill } from '../src/domain/backups/drills/drill.ts';
import type { JobHandler } from '../src/worker.ts';

export const backupsDrill: JobHandler<(typeof queues)['backups.drill']['schema']> = async (jobs, ctx) => {
  for (const job of jobs) await runDrill(ctx, job.data.operation_id);
};
