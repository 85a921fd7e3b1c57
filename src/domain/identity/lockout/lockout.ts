// Lockout per identifier: 10 failed checks lock the identifier for 15 minutes, counted in Postgres
// so it holds across web processes. Each check is reserved before the password is hashed (one
// statement), and failures plus checks in flight never pass 10: across any number of processes
// at most 10 wrong passwords are verified per identifier until a success clears the count or the
// lock runs out. Unknown identifiers are counted the same way, so a lockout says nothing about
// whether an account exists (OWASP Authentication Cheat Sheet, "Account Lockout").
//
// Only failures lock. A check that finds the budget taken by checks still in flight (a burst of
// sign-ins: many tabs, a service account, a slow machine) waits for one of them to settle: a
// success gives its slot back, a failure keeps it as a failure. It waits in line (waiting.ts; the
// row is in Postgres, so a check settled by any process frees the slot) and answers 423 only once
// the failures alone reach 10, or 429 rate_limited after `checkWaitMs` of waiting.
import { randomUUID } from 'node:crypto';
import { sha256 } from '../../../crypto.ts';
import type { Db } from '../../../db.ts';
import { AppError } from '../../../app-error.ts';
import { clearFailures, failReserved, lockoutState, releaseReserved, reserveAttempt } from './queries.ts';
import { reserveSlot, slotFreed } from './waiting.ts';

export const lockoutThreshold = 10;
export const lockoutSeconds = 15 * 60;
/** A check still unsettled after this long is taken for one whose process died, and no longer counts. */
export const checkSeconds = 60;
/** How long a check waits for a slot among the checks in flight: well past an argon2 verification on a loaded machine. */
export const checkWaitMs = 10_000;

export function identifierHash(envId: string, identifierNormalized: string): Buffer {
  return sha256(`${envId}\n${identifierNormalized}`);
}

function lockedOut(seconds: number): AppError {
  return new AppError('locked_out', 'too many failed sign-ins for this identifier; retry later', {
    retryAfter: seconds,
  });
}

const busy = () =>
  new AppError('rate_limited', 'too many sign-ins of this identifier are being checked at once; retry shortly', {
    retryAfter: 1,
  });

/** A reserved check: settle it once, as one of the three. */
export interface LockoutCheck {
  /** It failed: it counts; throws locked_out when it reached the threshold, else `otherwise`. */
  fail(otherwise: AppError): Promise<never>;
  /** Neither a failure nor a sign-in (the password right, a factor or verification still due): not counted. */
  release(): Promise<void>;
  /** A sign-in: the count starts afresh. */
  succeed(): Promise<void>;
}

/** Waits for a slot among the identifier's checks; locked_out when locked, rate_limited after `checkWaitMs`. */
function reserve(db: Db, envId: string, hash: Buffer, checkId: string): Promise<void> {
  const limits = { threshold: lockoutThreshold, lockSeconds: lockoutSeconds, checkSeconds };
  return reserveSlot(
    db,
    slotKey(envId, hash),
    checkId,
    {
      reserve: (id) => reserveAttempt(db, envId, hash, id, limits),
      async look() {
        const s = await lockoutState(db, envId, hash);
        // Failures at the threshold lock (failReserved sets locked_until with the tenth).
        const lockedSeconds =
          s.lockedSeconds > 0 ? s.lockedSeconds : s.failures >= lockoutThreshold ? lockoutSeconds : 0;
        return { lockedSeconds, free: s.failures + s.inFlight < lockoutThreshold };
      },
    },
    { deadline: Date.now() + checkWaitMs, lockedOut, busy },
  );
}

const slotKey = (envId: string, hash: Buffer) => `${envId}:${hash.toString('hex')}`;

/**
 * Reserves one check of the identifier before any password is hashed, runs `run` with it, and
 * gives it back if `run` ends without settling it (an unexpected error included).
 */
export async function withCheck<T>(
  db: Db,
  envId: string,
  hash: Buffer,
  run: (check: LockoutCheck) => Promise<T>,
): Promise<T> {
  const checkId = randomUUID();
  await reserve(db, envId, hash, checkId);
  let settled = false;
  const settle = () => {
    if (settled) throw new Error('a lockout check is settled once');
    settled = true;
  };
  const check: LockoutCheck = {
    async fail(otherwise) {
      settle();
      const seconds = await failReserved(db, envId, hash, checkId, {
        threshold: lockoutThreshold,
        lockSeconds: lockoutSeconds,
      });
      throw seconds > 0 ? lockedOut(seconds) : otherwise;
    },
    async release() {
      settle();
      await releaseReserved(db, envId, hash, checkId);
    },
    async succeed() {
      settle();
      await clearFailures(db, envId, hash, checkId);
    },
  };
  try {
    return await run(check);
  } finally {
    if (!settled) await releaseReserved(db, envId, hash, checkId).catch(() => undefined);
    slotFreed(db, slotKey(envId, hash));
  }
}
