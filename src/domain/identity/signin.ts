// Password sign-in (docs/api.md "Client API"). The order matters:
// 1. per-IP limit, then a check of the identifier reserved against its lockout (lockout.ts),
//    before the user is read and any hashing (it may wait for a slot among checks in flight);
// 2. argon2id verification always runs, against a dummy hash for an unknown identifier or a user
//    without a password, so timing does not reveal whether the account exists;
// 3. only once the password is right: user_locked (users/lock.ts), email_not_verified, then
//    mfa_required / factor proofs, so none of them tells a guesser that the account exists;
// 4. a wrong password or factor counts toward the lockout; success clears the count; a right
//    password that still needs a factor or a verified email gives its reservation back.
import type { Knex } from 'knex';
import type { Config } from '../../config.ts';
import { AppError } from '../../app-error.ts';
import type { Logger } from '../../log.ts';
import { consumeLimit } from './limits.ts';
import { identifierHash, withCheck } from './lockout/lockout.ts';
import { dummyHash, hashPassword, needsRehash, verifyPassword } from './passwords.ts';
import { type SessionRow } from './sessions/queries.ts';
import { type EndUserRow, usersQueries } from './users/queries.ts';
import { createSession, envIdentity, type SignInContext } from './sessions/sessions.ts';
import { issueTicket } from './tickets/tickets.ts';
import { checkFactorProofs, type FactorProof } from './factors/totp.ts';
import { normaliseEmail } from './tokens.ts';
import { userLocked } from './users/lock.ts';

export interface PasswordSignIn {
  envId: string;
  identifier: string;
  password: string;
  sessionMode: 'server' | 'browser';
  factorProofs: FactorProof[];
  from: SignInContext;
}

export type SignInResult =
  | { mode: 'server'; ticket: string; expires_at: string }
  | { mode: 'browser'; session: SessionRow; user: EndUserRow; token: string; envName: string };

export interface SignInDeps {
  db: Knex;
  config: Config;
  log: Logger;
}

// Made once per process at start, so the first unknown identifier does not pay for two hashes.
void dummyHash();

const wrongCredentials = () => new AppError('unauthorized', 'the identifier or password is wrong');

export async function signInWithPassword(deps: SignInDeps, input: PasswordSignIn): Promise<SignInResult> {
  const { db } = deps;
  const q = usersQueries(db);
  const identifier = normaliseEmail(input.identifier);
  const idHash = identifierHash(input.envId, identifier);
  const env = await envIdentity(db, input.envId);
  await consumeLimit(db, 'sign_in', input.envId, input.from.ip ?? 'unknown', env.settings.rate_limits.sign_in);
  const { user, passwordHash } = await withCheck(db, input.envId, idHash, async (check) => {
    // Read once the check holds its slot (it may have waited for one): the password checked is
    // the one stored now, not one a reset replaced meanwhile.
    const user = await q.userByEmail(input.envId, identifier);
    const passwordOk = await verifyPassword(user?.password_hash ?? (await dummyHash()), input.password);
    const record = (outcome: string) =>
      user
        ? q.insertSignIn({
            env_id: input.envId,
            end_user_id: user.id,
            method: 'password',
            outcome,
            ip: input.from.ip,
            user_agent: input.from.userAgent?.slice(0, 500) ?? null,
          })
        : Promise.resolve();

    if (!user || !user.password_hash || !passwordOk) {
      await record('wrong_password');
      return check.fail(wrongCredentials());
    }
    if (user.locked_time) {
      await check.release();
      await record('user_locked');
      throw userLocked();
    }
    if (!user.email_verified_time) {
      await check.release();
      await record('email_not_verified');
      throw new AppError('forbidden', 'verify the email address first: follow the link in the verification mail', {
        details: { reason: 'email_not_verified' },
      });
    }
    if (user.totp_active) {
      if (input.factorProofs.length === 0) {
        await check.release();
        await record('mfa_required');
        throw new AppError(
          'mfa_required',
          'this user has a second factor: send a totp or recovery_code proof in factor_proofs',
          {
            details: { factors: ['totp', 'recovery_code'] },
          },
        );
      }
      if (!(await checkFactorProofs(db, deps.config, user.id, input.factorProofs))) {
        await record('wrong_factor');
        return check.fail(
          new AppError('unauthorized', 'the second-factor code is wrong or already used', {
            details: { reason: 'invalid_factor' },
          }),
        );
      }
    }
    await Promise.all([check.succeed(), record('succeeded')]);
    return { user, passwordHash: user.password_hash };
  });

  if (needsRehash(passwordHash)) {
    // Parameters changed since this hash was made: upgrade it now that we know the password.
    await q.setPasswordHash(user.id, await hashPassword(input.password));
  }
  if (input.sessionMode === 'server') {
    return { mode: 'server', ...(await issueTicket(db, input.envId, user.id, 'password', input.from)) };
  }
  const { session, token } = await createSession(db, env, user.id, 'password', input.from);
  return { mode: 'browser', session, user, token, envName: env.envName };
}
