// `errors.reconcile-pending` (every 5 minutes): each environment's pending count set to the events
// its queue holds (domain/errors/intake/queries.ts reconcilePending), so a count lost by a
// web process that died (or moved by a redrive of dead letters) is put right within minutes.
import type { queues } from '../src/queues.ts';
import { reconcilePending } from '../src/domain/errors/intake/queries.ts';
import type { JobHandler } from '../src/worker.ts';

export const errorsReconcilePending: JobHandler<(typeof queues)['errors.reconcile-pending']['schema']> = async (
  _jobs,
  ctx,
) => {
  const reconciled = await reconcilePending(ctx.db);
  if (reconciled > 0) ctx.log.info({ environments: reconciled }, 'pending counts put right');
};
