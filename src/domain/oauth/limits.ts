// Wrong user-code entries are limited (RFC 8628 §5.1: a user code has ~34 bits, so guessing must
// be slow). Two counts: per client IP, and per browser (the portal's CSRF cookie), so one browser
// cannot guess alone and a NAT full of users still gets its fair share. Only misses count.
import type { Knex } from 'knex';
import { AppError } from '../../app-error.ts';
import { pgLimiter } from '../../rate-limits.ts';

export const userCodeLimits = { ip: { points: 50, seconds: 900 }, browser: { points: 10, seconds: 900 } } as const;

const limiters = (db: Knex) => {
  const make = (kind: keyof typeof userCodeLimits) =>
    pgLimiter(db, { table: 'identity_rate_limits', prefix: `user_code_${kind}`, ...userCodeLimits[kind] });
  return { ip: make('ip'), browser: make('browser') };
};

export interface Guesser {
  ip: string;
  browser: string;
}

/** Refuses with rate_limited while either count is spent. */
export async function assertMayGuess(db: Knex, who: Guesser): Promise<void> {
  const l = limiters(db);
  const [ip, browser] = await Promise.all([l.ip.get(who.ip), l.browser.get(who.browser)]);
  const spent = [
    ip && ip.consumedPoints >= userCodeLimits.ip.points ? ip.msBeforeNext : 0,
    browser && browser.consumedPoints >= userCodeLimits.browser.points ? browser.msBeforeNext : 0,
  ];
  const wait = Math.max(...spent);
  if (wait > 0)
    throw new AppError('rate_limited', 'too many wrong codes; wait a few minutes and try again', {
      retryAfter: Math.ceil(wait / 1000),
    });
}

export async function countWrongGuess(db: Knex, who: Guesser): Promise<void> {
  const l = limiters(db);
  await Promise.all([l.ip.penalty(who.ip, 1), l.browser.penalty(who.browser, 1)]);
}
