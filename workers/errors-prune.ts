// `errors.prune` (daily cron): dead-lettered error events past their retention (30 days), and
// accepted event ids past theirs (90 days).
import type { queues } from '../src/jobs.ts';
import { pruneDeadLetters, pruneEventIds } from '../src/domain/observability/intake/dead-letters.ts';
import type { JobHandler } from '../src/worker.ts';

export const errorsPrune: JobHandler<(typeof queues)['errors.prune']['schema']> = async (_jobs, ctx) => {
  const deleted = await pruneDeadLetters(ctx.db, new Date());
  if (deleted > 0) ctx.log.info({ deleted }, 'pruned expired error dead letters');
  const ids = await pruneEventIds(ctx.db, new Date());
  if (ids > 0) ctx.log.info({ ids }, 'pruned expired event ids');
};
