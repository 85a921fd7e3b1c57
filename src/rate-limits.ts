// Counted limits shared by every web process: rate-limiter-flexible on Postgres (one row per key
// and window). One limiter per table, prefix and limit is kept per pool, as the library expects to
// be reused; a spent limit is refused with rate_limited and the seconds to wait (Retry-After).
import type { Knex } from 'knex';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from './app-error.ts';

export interface PgLimit {
  /** Created by a migration (tableCreated): `identity_rate_limits`, `client_key_rate_limits`. */
  table: string;
  /** Keeps this limit's keys apart from the table's other limits. */
  prefix: string;
  points: number;
  seconds: number;
}

const limiters = new WeakMap<Knex, Map<string, RateLimiterPostgres>>();

export function pgLimiter(db: Knex, l: PgLimit): RateLimiterPostgres {
  let byLimit = limiters.get(db);
  if (!byLimit) limiters.set(db, (byLimit = new Map()));
  const id = `${l.table}:${l.prefix}:${l.points}:${l.seconds}`;
  let limiter = byLimit.get(id);
  if (!limiter) {
    limiter = new RateLimiterPostgres({
      storeClient: db,
      storeType: 'knex',
      tableName: l.table,
      tableCreated: true,
      keyPrefix: l.prefix,
      points: l.points,
      duration: l.seconds,
    });
    byLimit.set(id, limiter);
  }
  return limiter;
}

/** Counts `points` against `key`; past the limit, rate_limited with `message` (and `details`). */
export async function consumeOrRefuse(
  db: Knex,
  limit: PgLimit,
  key: string,
  points: number,
  refusal: { message: string; details?: Record<string, unknown> },
): Promise<void> {
  try {
    await pgLimiter(db, limit).consume(key, points);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    throw new AppError('rate_limited', refusal.message, {
      retryAfter: Math.max(1, Math.ceil(err.msBeforeNext / 1000)),
      ...(refusal.details ? { details: refusal.details } : {}),
    });
  }
}
