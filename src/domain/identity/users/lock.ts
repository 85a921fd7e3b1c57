// The operator's lock on an end user (docs/api.md "Identity", "Locking"), as Clerk's "lock" and
// "ban": while locked, no sign-in of any kind makes a session (password, social, ticket redeem,
// device grant), and locking ends every session, ticket and device approval at once. It lasts until
// unlocked, unlike the sign-in lockout after failed passwords (lockout/), which ends by itself and
// answers 423 with Retry-After; a lock has no time to retry after, so it is 403 `user_locked`.
//
// Every session and ticket is inserted only while the user's row, read FOR SHARE, is unlocked
// (sessions/queries.ts, tickets/queries.ts). The lock's UPDATE waits for such an insert in flight
// and its revoke, in the same transaction, then sees what that insert made; an insert after the
// lock committed finds the row locked and makes nothing.
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import { endAllAccess } from '../revocation.ts';
import { setUserLocked } from './queries.ts';

/** What every sign-in path answers for a locked user, once the credential itself was right. */
export function userLocked(): AppError {
  return new AppError('forbidden', 'this account is locked; ask the application to unlock it', {
    details: { reason: 'user_locked' },
  });
}

/** Locks the user and ends every way in; answers the number of sessions ended. Locking twice is one lock. */
export async function lockEndUser(db: Knex, envId: string, id: string): Promise<number> {
  return db.transaction(async (trx) => {
    if (!(await setUserLocked(trx, envId, id, true)))
      throw new AppError('not_found', `no end user ${id} in this environment`);
    return endAllAccess(trx, id);
  });
}

/** Lifts the lock; sessions ended by it stay ended. */
export async function unlockEndUser(db: Knex, envId: string, id: string): Promise<void> {
  if (!(await setUserLocked(db, envId, id, false)))
    throw new AppError('not_found', `no end user ${id} in this environment`);
}
