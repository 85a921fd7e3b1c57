// `errors.backfill-facets` (queued by the release until done): groups' tags and users of events
// stored before the store kept them (src/domain/errors/facets/backfill.ts). Batches commit with
// the cursor; a run cut short by the worker stopping fails, and its retry goes on from the cursor.
import type { queues } from '../src/queues.ts';
import { backfillFacets } from '../src/domain/errors/facets/backfill.ts';
import type { JobHandler } from '../src/worker.ts';

export const errorsBackfillFacets: JobHandler<(typeof queues)['errors.backfill-facets']['schema']> = async (
  _jobs,
  ctx,
) => {
  const r = await backfillFacets(ctx.db, { signal: ctx.stopping });
  if (r.events > 0)
    ctx.log.info({ events: r.events, done: r.done }, "added stored events' tags and users to their groups");
  if (!r.done)
    throw new Error('the worker stopped before the facets backfill was done; a retry goes on from its cursor');
};
