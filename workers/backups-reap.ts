// `backups.reap`: fails backups and restores whose worker died, and cleans what they left.
import type { queues } from '../src/queues.ts';
import { reapOrphans } from '../src/domain/backups/schedule/reap.ts';
import type { JobHandler } from '../src/worker.ts';

export const backupsReap: JobHandler<(typeof queues)['backups.reap']['schema']> = async (_jobs, ctx) => {
  const reaped = await reapOrphans(ctx);
  if (reaped.backups.length + reaped.operations.length > 0) ctx.log.warn(reaped, 'reaped orphaned backup runs');
};
