// `errors.prune` (daily cron): src/domain/errors/retention/daily.ts (pending counts are put right
// every 5 minutes: errors-reconcile-pending.ts). Dead-lettered events are pg-boss's to delete,
// after their 30 days (src/jobs/sync.ts).
import type { queues } from '../src/queues.ts';
import { pruneErrorsDaily } from '../src/domain/errors/retention/daily.ts';
import type { JobHandler } from '../src/worker.ts';

export const errorsPrune: JobHandler<(typeof queues)['errors.prune']['schema']> = async (_jobs, ctx) => {
  const { chunks, ...pruned } = await pruneErrorsDaily(ctx);
  if (chunks > 0) ctx.log.info({ chunks }, 'pruned sentry-cli chunks no bundle claimed');
  if (pruned.ids > 0 || pruned.deleted_events > 0 || pruned.deleted_groups > 0)
    ctx.log.info(pruned, 'pruned expired errors');
};
