// Accepted event ids (docs/api.md "Idempotent capture") are remembered 90 days, then pruned by the
// daily `errors.prune` job: a retry later than that is a new event. 90 days is the longest event
// retention Sentry's plans offer; no SDK retries an event for longer. Small statements: a large
// backlog never holds one long lock.
import type { Db } from '../../../db.ts';
import { deleteEventIds } from './queries.ts';

const batch = 5000;

/** How long an accepted event id is remembered (a retry later than this is a new event). */
export const eventIdRetentionDays = 90;

/** Forgets event ids accepted more than `eventIdRetentionDays` ago; answers how many. */
export async function pruneEventIds(db: Db, now: Date): Promise<number> {
  const before = new Date(now.getTime() - eventIdRetentionDays * 24 * 3600 * 1000);
  let total = 0;
  for (;;) {
    const n = await deleteEventIds(db, before, batch);
    total += n;
    if (n < batch) return total;
  }
}
