// `errors.prune` (daily cron): events past their environment's retention and the groups left
// without events (domain/errors/retention/prune.ts), day partitions made ahead, accepted
// event ids past their 90 days, and sentry-cli chunks no bundle claimed within a day (pending
// counts are put right every 5 minutes: errors-reconcile-pending.ts). Dead-lettered events are
// pg-boss's to delete, after their 30 days (src/jobs/sync.ts).
import type { queues } from '../src/queues.ts';
import { pruneEventIds } from '../src/domain/errors/intake/event-ids.ts';
import { pruneErrors } from '../src/domain/errors/retention/prune.ts';
import { pruneChunks } from '../src/domain/errors/sentry/cli/chunks.ts';
import type { JobHandler } from '../src/worker.ts';

export const errorsPrune: JobHandler<(typeof queues)['errors.prune']['schema']> = async (_jobs, ctx) => {
  const now = new Date();
  const pruned = await pruneErrors(ctx.db, now);
  const ids = await pruneEventIds(ctx.db, now);
  const chunks = await pruneChunks(ctx, now);
  if (chunks > 0) ctx.log.info({ chunks }, 'pruned sentry-cli chunks no bundle claimed');
  if (ids > 0 || pruned.deleted_events > 0 || pruned.deleted_groups > 0)
    ctx.log.info({ ids, ...pruned }, 'pruned expired errors');
};
