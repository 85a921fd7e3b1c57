// `errors.prune` (daily cron): dead-lettered error events past their retention (30 days).
import type { queues } from '../src/jobs.ts';
import { pruneDeadLetters } from '../src/domain/observability/dead-letters.ts';
import type { JobHandler } from '../src/worker.ts';

export const errorsPrune: JobHandler<(typeof queues)['errors.prune']['schema']> = async (_jobs, ctx) => {
  const deleted = await pruneDeadLetters(ctx.db, new Date());
  if (deleted > 0) ctx.log.info({ deleted }, 'pruned expired error dead letters');
};
