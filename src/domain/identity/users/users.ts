// End users as the application's server manages them with a secret key (docs/api.md "Resources":
// "End users and sessions"). Creating one checks the password like sign-up does, but answers at once: a server
// holding the secret key may know which addresses exist.
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import { emitUserCreated, emitUserDeleted } from './events.ts';
import { breachedChecker } from '../breached/breached.ts';
import { hashPassword, passwordProblem } from '../passwords.ts';
import { type EndUserRow, usersQueries } from './queries.ts';
import { endAllAccess } from '../revocation.ts';
import { type SessionRow, sessionQueries } from '../sessions/queries.ts';
import { envIdentity } from '../sessions/sessions.ts';
import { normaliseEmail } from '../tokens.ts';

export async function createEndUser(
  { db, jobs }: { db: Knex; jobs: Jobs },
  envId: string,
  input: { email: string; password?: string | undefined; email_verified?: boolean | undefined },
): Promise<EndUserRow> {
  let hash: string | null = null;
  if (input.password !== undefined) {
    const env = await envIdentity(db, envId);
    const problem = passwordProblem(input.password, env.settings.require_second_factor);
    if (problem) throw new AppError('invalid_request', problem);
    if (await breachedChecker(db, env.settings).check(input.password)) {
      throw new AppError('invalid_request', 'this password appears in lists of breached passwords; choose another', {
        details: { reason: 'breached_password' },
      });
    }
    hash = await hashPassword(input.password);
  }
  const email = input.email.trim();
  const user = await db.transaction(async (trx) => {
    const created = await usersQueries(trx).insertUser({
      env_id: envId,
      email,
      email_normalized: normaliseEmail(email),
      password_hash: hash,
      email_verified: input.email_verified ?? false,
    });
    if (created) await emitUserCreated(trx, jobs, envId, created.id);
    return created;
  });
  if (!user)
    throw new AppError('conflict', 'an end user with this email already exists', {
      details: { reason: 'email_taken' },
    });
  return user;
}

export async function requireEndUser(db: Knex, envId: string, id: string): Promise<EndUserRow> {
  const user = await usersQueries(db).userById(envId, id);
  if (!user) throw new AppError('not_found', `no end user ${id} in this environment`);
  return user;
}

/** Sessions, tickets and device approvals go with the row (ON DELETE CASCADE). */
export async function deleteEndUser({ db, jobs }: { db: Knex; jobs: Jobs }, envId: string, id: string): Promise<void> {
  await db.transaction(async (trx) => {
    if (!(await usersQueries(trx).deleteUser(envId, id)))
      throw new AppError('not_found', `no end user ${id} in this environment`);
    await emitUserDeleted(trx, jobs, envId, id);
  });
}

/** Ends every session, and the tickets and device approvals that would become sessions later. */
export async function revokeEndUserSessions(db: Knex, envId: string, id: string): Promise<number> {
  await requireEndUser(db, envId, id);
  return db.transaction((trx) => endAllAccess(trx, id));
}

/**
 * Ends one session of the user, and answers it. Tickets and device approvals are left alone: they
 * belong to no session. Revoking a revoked session changes nothing (a retry is safe); a session of
 * another user is 404.
 */
export async function revokeEndUserSession(
  db: Knex,
  envId: string,
  id: string,
  sessionId: string,
): Promise<SessionRow> {
  await requireEndUser(db, envId, id);
  const session = await sessionQueries(db).revokeUserSession(id, sessionId);
  if (!session) throw new AppError('not_found', `no session ${sessionId} of end user ${id}`);
  return session;
}
