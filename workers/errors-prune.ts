// `errors.prune` (daily cron): accepted event ids past their retention (90 days). Dead-lettered
// events are pg-boss's to delete, after their 30 days (src/jobs.ts).
import type { queues } from '../src/jobs.ts';
import { pruneEventIds } from '../src/domain/observability/intake/event-ids.ts';
import type { JobHandler } from '../src/worker.ts';

export const errorsPrune: JobHandler<(typeof queues)['errors.prune']['schema']> = async (_jobs, ctx) => {
  const ids = await pruneEventIds(ctx.db, new Date());
  if (ids > 0) ctx.log.info({ ids }, 'pruned expired event ids');
};
