// The operator's lock on an end user (docs/api.md "Identity", "Locking"), as Clerk's "lock" and
// "ban": while locked, no sign-in of any kind makes a session (password, social, ticket redeem,
// device grant), and locking ends every session, ticket and device approval at once. It lasts until
// unlocked, unlike the sign-in lockout after failed passwords (lockout/), which ends by itself and
// answers 423 with Retry-After; a lock has no time to retry after, so it is 403 `user_locked`.
//
// Every session and ticket is inserted only while the user's row, read FOR SHARE, is unlocked
// (sessions/queries.ts, tickets/queries.ts). The lock's UPDATE waits for such an insert in flight,
// and its revoke, in the same transaction, then sees what that insert made; an insert after the
// lock committed finds the row locked and makes nothing.
//
// Order, against deadlocks (READ COMMITTED): a ticket redeem or device poll locks its grant's row
// and then reads the user FOR SHARE. So the lock ends pending grants before it takes the user's
// row, and only sessions after: never the user's row first and a grant's second, as a redeem
// holding its grant and waiting on the user would then wait on us as we wait on it. A grant issued
// between the two steps cannot become a session while the user is locked (every insert checks),
// and unlocking ends such grants, again before it takes the user's row.
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import { endPendingGrants } from '../revocation.ts';
import { sessionQueries } from '../sessions/queries.ts';
import { setUserLocked, usersQueries } from './queries.ts';

/** What every sign-in path answers for a locked user, once the credential itself was right. */
export function userLocked(): AppError {
  return new AppError('forbidden', 'this account is locked; ask the application to unlock it', {
    details: { reason: 'user_locked' },
  });
}

/** Read without a lock (users.ts requireEndUser, which this file cannot import: sessions.ts imports it). */
async function requireUser(db: Knex, envId: string, id: string) {
  const user = await usersQueries(db).userById(envId, id);
  if (!user) throw new AppError('not_found', `no end user ${id} in this environment`);
  return user;
}

/** Locks the user and ends every way in; answers the number of sessions ended. Locking twice is one lock. */
export async function lockEndUser(db: Knex, envId: string, id: string): Promise<number> {
  await requireUser(db, envId, id);
  return db.transaction(async (trx) => {
    await endPendingGrants(trx, id);
    if (!(await setUserLocked(trx, envId, id, true)))
      throw new AppError('not_found', `no end user ${id} in this environment`);
    return sessionQueries(trx).revokeUserSessions(id);
  });
}

/** Lifts the lock; sessions ended by it stay ended, and grants made while it held are ended. */
export async function unlockEndUser(db: Knex, envId: string, id: string): Promise<void> {
  const user = await requireUser(db, envId, id);
  await db.transaction(async (trx) => {
    if (user.locked_time) await endPendingGrants(trx, id);
    if (!(await setUserLocked(trx, envId, id, false)))
      throw new AppError('not_found', `no end user ${id} in this environment`);
  });
}
