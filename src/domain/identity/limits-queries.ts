// SQL for the request limits' shared table (limits.ts; OAuth's and the console's limits use it too).
import type { Db } from '../../db.ts';

/** Counters whose window ended over an hour ago (rate-limiter-flexible's `expire`, in milliseconds). */
export async function pruneRateLimits(db: Db, now: number = Date.now()): Promise<number> {
  return db('identity_rate_limits')
    .where('expire', '<', now - 3600_000)
    .delete();
}
