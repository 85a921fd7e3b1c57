// `backups.prune`: deletes backups past their retention (object, then row).
import type { queues } from '../src/queues.ts';
import { pruneExpired } from '../src/domain/backups/schedule/prune.ts';
import type { JobHandler } from '../src/worker.ts';

export const backupsPrune: JobHandler<(typeof queues)['backups.prune']['schema']> = async (_jobs, ctx) => {
  const removed = await pruneExpired(ctx, new Date());
  if (removed.length > 0) ctx.log.info({ removed: removed.length }, 'pruned expired backups');
};
