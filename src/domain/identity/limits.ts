// Per-IP request limits on the client API, with rate-limiter-flexible on Postgres so
// every web process shares one count. The numbers are ours (SPEC.md leaves them open): generous
// enough for a whole office behind one NAT, tight enough to make guessing from one address slow.
// Per-identifier lockout (lockout.ts) is the second line.
import type { Knex } from 'knex';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { AppError } from '../../errors.ts';

export type LimitedAction = 'sign_in' | 'sign_up' | 'password_reset' | 'verify_email' | 'redeem';

export interface Limit {
  points: number;
  seconds: number;
}

export const defaultLimits: Record<LimitedAction, Limit> = {
  sign_in: { points: 300, seconds: 300 },
  sign_up: { points: 50, seconds: 600 },
  password_reset: { points: 20, seconds: 600 },
  verify_email: { points: 100, seconds: 600 },
  redeem: { points: 1200, seconds: 60 },
};

const limiters = new WeakMap<Knex, Map<string, RateLimiterPostgres>>();

function limiterFor(db: Knex, action: LimitedAction, limit: Limit): RateLimiterPostgres {
  let byKey = limiters.get(db);
  if (!byKey) limiters.set(db, (byKey = new Map()));
  const key = `${action}:${limit.points}:${limit.seconds}`;
  let limiter = byKey.get(key);
  if (!limiter) {
    limiter = new RateLimiterPostgres({
      storeClient: db,
      storeType: 'knex',
      tableName: 'identity_rate_limits',
      tableCreated: true,
      keyPrefix: `id_${action}`,
      points: limit.points,
      duration: limit.seconds,
    });
    byKey.set(key, limiter);
  }
  return limiter;
}

/** Counts one request of `ip` in the environment; rate_limited with Retry-After past the limit. */
export async function consumeLimit(
  db: Knex,
  action: LimitedAction,
  envId: string,
  ip: string,
  limit?: Limit,
): Promise<void> {
  try {
    await limiterFor(db, action, limit ?? defaultLimits[action]).consume(`${envId}:${ip}`);
  } catch (err) {
    if (err instanceof RateLimiterRes) {
      throw new AppError('rate_limited', 'too many requests from this address; retry later', {
        retryAfter: Math.max(1, Math.ceil(err.msBeforeNext / 1000)),
      });
    }
    throw err;
  }
}
