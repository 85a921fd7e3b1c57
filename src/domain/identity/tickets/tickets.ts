// Tickets (docs/api.md "Ticket"): what server mode hands the page instead of a bearer. Two minutes,
// one use, stored as SHA-256; the application's server redeems it for a session. Unknown, expired
// and used tickets are all `unauthorized` with one message (docs/api.md), so none can be told apart.
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import type { SessionRow } from '../sessions/queries.ts';
import { ticketQueries } from './queries.ts';
import { type EndUserRow, usersQueries } from '../users/queries.ts';
import { createSession, envIdentity, type SignInContext } from '../sessions/sessions.ts';
import { userLocked } from '../users/lock.ts';
import { hashToken, isTokenShape, newToken } from '../tokens.ts';

export const ticketSeconds = 120;

export async function issueTicket(
  db: Knex,
  envId: string,
  endUserId: string,
  method: string,
  from: SignInContext,
): Promise<{ ticket: string; expires_at: string }> {
  const ticket = newToken('ticket');
  const expires = await ticketQueries(db).insertTicket({
    token_hash: hashToken(ticket),
    env_id: envId,
    end_user_id: endUserId,
    method,
    ip: from.ip,
    user_agent: from.userAgent?.slice(0, 500) ?? null,
    lifetime_seconds: ticketSeconds,
  });
  if (!expires) throw userLocked();
  return { ticket, expires_at: expires.toISOString() };
}

/** Redeem and session creation commit together: a failed insert leaves the ticket unused. */
export async function redeemTicket(
  db: Knex,
  envId: string,
  ticket: string,
): Promise<{ session: SessionRow; user: EndUserRow; token: string; envName: string }> {
  const refused = new AppError('unauthorized', 'the ticket is unknown, expired or already used');
  if (!isTokenShape('ticket', ticket)) throw refused;
  const env = await envIdentity(db, envId);
  return db.transaction(async (trx) => {
    const tickets = ticketQueries(trx);
    const users = usersQueries(trx);
    const row = await tickets.redeemTicket(envId, hashToken(ticket));
    if (!row) throw refused;
    const user = await users.userById(envId, row.end_user_id);
    if (!user) throw refused;
    // Locking deletes outstanding tickets; this answers a redeem that raced it like one after it.
    if (user.locked_time) throw refused;
    const { session, token } = await createSession(trx, env, user.id, row.method, {
      ip: row.ip,
      userAgent: row.user_agent,
    });
    return { session, user, token, envName: env.envName };
  });
}
