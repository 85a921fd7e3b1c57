// Lockout per identifier: 10 failed checks lock the identifier for 15 minutes, counted in Postgres
// so it holds across web processes. Each check is reserved before the password is hashed (one
// statement), so concurrent guesses cannot all slip in before the count catches up: across any
// number of processes at most 10 checks run per identifier until a success clears the count or
// the lock runs out, and the rest answer locked_out without touching argon2. Unknown identifiers
// are counted the same way, so a lockout says nothing about whether an account exists (OWASP
// Authentication Cheat Sheet, "Account Lockout").
import { sha256 } from '../../../crypto.ts';
import type { Db } from '../../../db.ts';
import { AppError } from '../../../errors.ts';
import { identityQueries } from '../queries.ts';

export const lockoutThreshold = 10;
export const lockoutSeconds = 15 * 60;

export function identifierHash(envId: string, identifierNormalized: string): Buffer {
  return sha256(`${envId}\n${identifierNormalized}`);
}

function lockedOut(seconds: number): AppError {
  return new AppError('locked_out', 'too many failed sign-ins for this identifier; retry later', {
    retryAfter: seconds,
  });
}

/** Reserves one check of the identifier, or throws locked_out. Call before any password is hashed. */
export async function reserveCheck(db: Db, envId: string, hash: Buffer): Promise<void> {
  const { reserved, waitSeconds } = await identityQueries(db).reserveAttempt(
    envId,
    hash,
    lockoutThreshold,
    lockoutSeconds,
  );
  if (!reserved) throw lockedOut(waitSeconds);
}

/** The reserved check failed: it counts; throws locked_out when it reached the threshold, else `otherwise`. */
export async function failAttempt(db: Db, envId: string, hash: Buffer, otherwise: AppError): Promise<never> {
  const seconds = await identityQueries(db).failReserved(envId, hash, lockoutThreshold, lockoutSeconds);
  throw seconds > 0 ? lockedOut(seconds) : otherwise;
}

/** The reserved check was not a failure (the password was right, something else is due): it does not count. */
export async function releaseCheck(db: Db, envId: string, hash: Buffer): Promise<void> {
  await identityQueries(db).releaseReserved(envId, hash);
}
