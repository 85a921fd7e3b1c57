// Ending a user's ways back in. Besides sessions, two things turn into a session later: a ticket
// (redeemed by the application's server within two minutes) and a device grant the user approved
// that the device has not collected yet. Signing a user out everywhere (revoke, password reset:
// OWASP's Forgot Password Cheat Sheet has a reset end existing sessions) must end those too, or whoever holds one walks back in right after the owner reacted. A change
// of second factor ends them as well: they were issued under the factors that held before.
//
// Order matters under concurrency (READ COMMITTED): tickets and device grants first, sessions last.
// A redeem or poll that locked its row before us commits its session before our session UPDATE
// starts, so that statement sees and revokes it; one that waits on our lock finds its row deleted
// or denied and creates nothing. Social sign-in keeps no per-user state before its callback, and
// the callback is a fresh sign-in at the provider, so there is nothing of it to end here.
import type { Db } from '../../db.ts';
import { denyUncollected } from '../oauth/queries.ts';
import { sessionQueries } from './sessions/queries.ts';
import { ticketQueries } from './tickets/queries.ts';

/** Tickets not yet redeemed and device approvals not yet collected; sessions are left alone. */
export async function endPendingGrants(db: Db, endUserId: string): Promise<void> {
  await ticketQueries(db).deleteOutstandingTickets(endUserId);
  await denyUncollected(db, endUserId);
}

/** Everything: pending grants, then every session. Answers the number of sessions ended. Call in a transaction. */
export async function endAllAccess(db: Db, endUserId: string): Promise<number> {
  await endPendingGrants(db, endUserId);
  return sessionQueries(db).revokeUserSessions(endUserId);
}
