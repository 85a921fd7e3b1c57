// Dead letters (error_event_dead) are kept 30 days, then pruned by the daily `errors.prune` job.
// They exist so an operator can see why an event failed and re-drive it after a fix; 30 days is
// the shortest event retention Sentry users know (its plans keep events 30 to 90 days), long enough
// for a fix to ship, and the same as this service's pg-boss dead letters (src/jobs.ts). They are
// sealed like the inbox, but a captured secret should still not outlive its usefulness.
import type { Db } from '../../../db.ts';
import { ingestQueries } from './queries.ts';

export const deadLetterRetentionDays = 30;

const batch = 5000;

/** Deletes the dead letters buried more than the retention before `now`; answers how many. */
/** How long an accepted event id is remembered (a retry later than this is a new event). */
export const eventIdRetentionDays = 90;

/** Forgets event ids accepted more than `eventIdRetentionDays` ago. */
export async function pruneEventIds(db: Db, now: Date): Promise<number> {
  const before = new Date(now.getTime() - eventIdRetentionDays * 24 * 3600 * 1000);
  let total = 0;
  for (;;) {
    const n = await ingestQueries(db).pruneEventIds(before, batch);
    total += n;
    if (n < batch) return total;
  }
}

export async function pruneDeadLetters(db: Db, now: Date): Promise<number> {
  const before = new Date(now.getTime() - deadLetterRetentionDays * 24 * 3600 * 1000);
  const q = ingestQueries(db);
  let total = 0;
  for (;;) {
    const n = await q.pruneDead(before, batch);
    total += n;
    if (n < batch) return total;
  }
}
