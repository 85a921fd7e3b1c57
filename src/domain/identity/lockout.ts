// Lockout per identifier (issue #4): 10 consecutive failures lock the identifier for 15 minutes,
// counted in Postgres in one statement, so it holds across web processes. Unknown identifiers are
// counted the same way, so a lockout says nothing about whether an account exists (OWASP
// Authentication Cheat Sheet, "Account Lockout").
import { sha256 } from '../../crypto.ts';
import type { Db } from '../../db.ts';
import { AppError } from '../../errors.ts';
import { identityQueries } from './queries.ts';

export const lockoutThreshold = 10;
export const lockoutSeconds = 15 * 60;

export function identifierHash(envId: string, identifierNormalized: string): Buffer {
  return sha256(`${envId}\n${identifierNormalized}`);
}

function lockedOut(seconds: number): AppError {
  return new AppError('locked_out', 'too many failed sign-ins for this identifier; retry later', { retryAfter: seconds });
}

/** Throws locked_out while the identifier is locked; answers the failures counted so far. */
export function assertNotLocked(state: { failures: number; lockedSeconds: number }): number {
  if (state.lockedSeconds > 0) throw lockedOut(state.lockedSeconds);
  return state.failures;
}

/** Counts a failure and throws: locked_out when this one reached the threshold, else `otherwise`. */
export async function failAttempt(db: Db, envId: string, hash: Buffer, otherwise: AppError): Promise<never> {
  const seconds = await identityQueries(db).recordFailure(envId, hash, lockoutThreshold, lockoutSeconds);
  throw seconds > 0 ? lockedOut(seconds) : otherwise;
}
