// Emailed links: address verification (24 hours) and password reset (one hour, OWASP Forgot
// Password Cheat Sheet). Each link is a one-use token stored as SHA-256; using it is one
// conditional UPDATE, so a link works once even when clicked twice at the same moment.
import type { Knex } from 'knex';
import type { Config } from '../../../config.ts';
import { AppError } from '../../../app-error.ts';
import type { IdentityJobs as Jobs } from '../queues.ts';
import { passwordResetMail } from '../../../mail/templates.ts';
import type { Mailer } from '../../../mail/index.ts';
import { breachedChecker } from '../breached/breached.ts';
import { consumeLimit } from '../limits.ts';
import { hashPassword, passwordProblem } from '../passwords.ts';
import { linkQueries } from './queries.ts';
import { usersQueries } from '../users/queries.ts';
import { allowedRedirect, stillAllowed } from '../redirects.ts';
import { endAllAccess } from '../revocation.ts';
import { envIdentity, type EnvIdentity } from '../sessions/sessions.ts';
import { hashToken, isTokenShape, newToken, normaliseEmail } from '../tokens.ts';

const lifetimes = { verify_email: 24 * 3600, reset_password: 3600 } as const;
type Purpose = keyof typeof lifetimes;

export function appName(env: EnvIdentity): string {
  return env.settings.branding.name ?? env.envName.split('/')[3] ?? 'your application';
}

export async function issueEmailLink(
  db: Knex,
  config: Config,
  env: EnvIdentity,
  endUserId: string,
  purpose: Purpose,
  redirectUrl: string | null,
): Promise<string> {
  const token = newToken('email');
  await linkQueries(db).insertEmailToken({
    token_hash: hashToken(token),
    env_id: env.envId,
    end_user_id: endUserId,
    purpose,
    redirect_url: redirectUrl,
    lifetime_seconds: lifetimes[purpose],
  });
  if (purpose === 'verify_email') return `${config.CAIRN_BASE_URL}/v1/client/verify-email?token=${token}`;
  const page = new URL(redirectUrl ?? `${config.CAIRN_BASE_URL}/reset-password`);
  page.searchParams.set('reset_token', token);
  return page.toString();
}

/** Answers where to send the browser: the sign-up's redirect_url, else the Account Portal page. */
export async function verifyEmail(db: Knex, config: Config, token: string): Promise<string> {
  const portal = new URL(`${config.CAIRN_BASE_URL}/verify-email`);
  const used = isTokenShape('email', token)
    ? await linkQueries(db).useEmailToken(hashToken(token), 'verify_email')
    : undefined;
  if (!used) {
    portal.searchParams.set('status', 'invalid');
    return portal.toString();
  }
  await usersQueries(db).markEmailVerified(used.end_user_id);
  // Checked again at use: a target stored under older rules or settings must not be followed.
  const target = new URL(
    stillAllowed(config, await envIdentity(db, used.env_id), used.redirect_url) ?? portal.toString(),
  );
  target.searchParams.set('email_verified', 'true');
  return target.toString();
}

export async function requestPasswordReset(
  deps: { db: Knex; jobs: Jobs; config: Config },
  input: { envId: string; email: string; redirectUrl?: string | undefined; ip: string },
): Promise<void> {
  await consumeLimit(deps.db, 'password_reset', input.envId, input.ip);
  const env = await envIdentity(deps.db, input.envId);
  const redirect = input.redirectUrl ? allowedRedirect(deps.config, env, input.redirectUrl) : undefined;
  await deps.jobs.enqueue(deps.db, 'identity.password-reset', {
    env_id: input.envId,
    email: input.email,
    redirect_url: redirect,
  });
}

/** Worker side: mails a link only when the account exists; the request answered 202 either way. */
export async function sendPasswordReset(
  deps: { db: Knex; config: Config; mailer: Mailer },
  input: { env_id: string; email: string; redirect_url?: string | undefined },
): Promise<void> {
  const user = await usersQueries(deps.db).userByEmail(input.env_id, normaliseEmail(input.email));
  if (!user) return;
  const env = await envIdentity(deps.db, input.env_id);
  // A job queued before the environment's settings changed is held to today's rule.
  const link = await issueEmailLink(
    deps.db,
    deps.config,
    env,
    user.id,
    'reset_password',
    stillAllowed(deps.config, env, input.redirect_url),
  );
  await deps.mailer.send(passwordResetMail(user.email, appName(env), link), env);
}

/**
 * Sets the new password and ends every session, pending ticket and device approval, and any other
 * reset link (OWASP: a reset invalidates existing sessions).
 * Following the emailed link proves the address, so an unverified address becomes verified.
 */
export async function confirmPasswordReset(db: Knex, envId: string, token: string, password: string): Promise<void> {
  const env = await envIdentity(db, envId);
  const problem = passwordProblem(password, env.settings.require_second_factor);
  if (problem) throw new AppError('invalid_request', problem);
  if (await breachedChecker(db, env.settings).check(password)) {
    throw new AppError('invalid_request', 'this password appears in lists of breached passwords; choose another', {
      details: { reason: 'breached_password' },
    });
  }
  const hash = await hashPassword(password);
  await db.transaction(async (trx) => {
    const tokens = linkQueries(trx);
    const users = usersQueries(trx);
    const used = isTokenShape('email', token)
      ? await tokens.useEmailToken(hashToken(token), 'reset_password')
      : undefined;
    if (!used || used.env_id !== envId)
      throw new AppError('unauthorized', 'the reset link is unknown, expired or already used');
    await users.setPasswordHash(used.end_user_id, hash);
    await users.markEmailVerified(used.end_user_id);
    await tokens.spendEmailTokens(used.end_user_id, 'reset_password');
    await endAllAccess(trx, used.end_user_id);
  });
}
