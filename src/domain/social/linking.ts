// Which end user a provider identity signs in:
// 1. an identity seen before signs in its user; if that user was deleted the identity is a
//    tombstone and is refused (deleted users cannot come back through social sign-in);
// 2. a new identity whose email the provider marks verified joins the user with that address;
//    if that account's address was never verified, its password and sessions are dropped first,
//    so whoever registered the address unverified cannot keep a way in (account pre-hijacking,
//    Sudhodanan & Paverd, USENIX Security 2022);
// 3. otherwise a new user is created; an unverified address that another user holds is refused.
// A locked user (identity/users/lock.ts) is refused in 1 and 2, before anything changes.
import type { Knex } from 'knex';
import { AppError } from '../../app-error.ts';
import type { AnyJobs as Jobs } from '../../jobs/index.ts';
import { emitUserCreated } from '../identity/users/events.ts';
import { usersQueries } from '../identity/users/queries.ts';
import { endAllAccess } from '../identity/revocation.ts';
import { userLocked } from '../identity/users/lock.ts';
import { normaliseEmail } from '../identity/tokens.ts';
import { socialQueries } from './queries.ts';
import type { ProviderProfile } from './rp.ts';

export async function linkIdentity(
  { db, jobs }: { db: Knex; jobs: Jobs },
  envId: string,
  provider: string,
  p: ProviderProfile,
): Promise<string> {
  return db.transaction(async (trx) => {
    const sq = socialQueries(trx);
    const iq = usersQueries(trx);
    const record = (userId: string) =>
      iq.insertSignIn({
        env_id: envId,
        end_user_id: userId,
        method: `oauth_${provider}`,
        outcome: 'succeeded',
        ip: null,
        user_agent: null,
      });
    const known = await sq.identity(envId, provider, p.subject);
    if (known) {
      if (!known.end_user_id)
        throw new AppError('forbidden', 'this account was deleted', { details: { reason: 'account_deleted' } });
      if ((await iq.userById(envId, known.end_user_id))?.locked_time) throw userLocked();
      await sq.touchIdentity(known.id, p.email, p.emailVerified);
      await record(known.end_user_id);
      return known.end_user_id;
    }
    if (!p.email)
      throw new AppError('forbidden', `${provider} shared no email address; allow access to it and try again`, {
        details: { reason: 'email_required' },
      });
    const existing = await iq.userByEmail(envId, normaliseEmail(p.email));
    let userId: string;
    if (existing) {
      if (existing.locked_time) throw userLocked();
      if (!p.emailVerified)
        throw new AppError(
          'forbidden',
          'an account with this email exists, and the provider has not verified the address',
          { details: { reason: 'email_not_verified' } },
        );
      await sq.resetUnverifiedAccount(existing.id);
      await endAllAccess(trx, existing.id);
      await iq.markEmailVerified(existing.id);
      userId = existing.id;
    } else {
      const created = await iq.insertUser({
        env_id: envId,
        email: p.email.trim(),
        email_normalized: normaliseEmail(p.email),
        password_hash: null,
        email_verified: p.emailVerified,
      });
      if (!created) throw new AppError('conflict', 'the account was created concurrently; try again');
      userId = created.id;
      await emitUserCreated(trx, jobs, envId, userId);
    }
    await sq.insertIdentity({
      env_id: envId,
      end_user_id: userId,
      provider,
      subject: p.subject,
      email: p.email,
      email_verified: p.emailVerified,
      display_name: p.name,
    });
    await record(userId);
    return userId;
  });
}
