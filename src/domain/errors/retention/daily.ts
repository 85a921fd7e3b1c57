// The daily `errors.prune` job's work: events past their environment's retention and the groups
// left without events (prune.ts), day partitions made ahead, accepted event ids past their 90 days
// (intake/event-ids.ts), and sentry-cli chunks no bundle claimed within a day.
import { pruneEventIds } from '../intake/event-ids.ts';
import { pruneChunks } from '../sentry/cli/chunks.ts';
import type { UploadDeps } from '../source-maps/uploads.ts';
import { pruneErrors, type PruneResult } from './prune.ts';

export interface DailyPruneResult extends PruneResult {
  /** Accepted event ids forgotten. */
  ids: number;
  /** Unclaimed sentry-cli chunks deleted. */
  chunks: number;
}

export async function pruneErrorsDaily(deps: UploadDeps, now: Date = new Date()): Promise<DailyPruneResult> {
  const pruned = await pruneErrors(deps.db, now);
  const ids = await pruneEventIds(deps.db, now);
  const chunks = await pruneChunks(deps, now);
  return { ...pruned, ids, chunks };
}
