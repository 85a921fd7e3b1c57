// Per-IP request limits on the client API, with rate-limiter-flexible on Postgres so
// every web process shares one count. The numbers are our choice: generous
// enough for a whole office behind one NAT, tight enough to make guessing from one address slow.
// Per-identifier lockout (lockout.ts) is the second line.
import type { Knex } from 'knex';
import { consumeOrRefuse } from '../../rate-limits.ts';

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

/** Counts one request of `ip` in the environment; rate_limited with Retry-After past the limit. */
export async function consumeLimit(
  db: Knex,
  action: LimitedAction,
  envId: string,
  ip: string,
  limit?: Limit,
): Promise<void> {
  const { points, seconds } = limit ?? defaultLimits[action];
  await consumeOrRefuse(
    db,
    { table: 'identity_rate_limits', prefix: `id_${action}`, points, seconds },
    `${envId}:${ip}`,
    1,
    {
      message: 'too many requests from this address; retry later',
    },
  );
}
