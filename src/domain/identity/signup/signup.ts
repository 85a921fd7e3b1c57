// Sign-up (docs/api.md "Identity"). The request only validates, seals the password for
// the worker and enqueues: it does the same work whether or not the address has an account, so
// neither the answer nor its timing tells them apart. The worker decides and mails:
// a new account and a verification link, "someone tried with your address", or "breached password".
// The password is sealed with the service key (bound to the pending row's id), never put in the
// job itself, and erased as soon as it is hashed.
import type { Knex } from 'knex';
import type { Config } from '../../../config.ts';
import { keyringFromConfig, open, seal } from '../../../crypto.ts';
import { AppError } from '../../../app-error.ts';
import { newId } from '../../../ids.ts';
import type { AnyJobs } from '../../../jobs/index.ts';
import type { IdentityJobs as Jobs } from '../queues.ts';
import type { Logger } from '../../../log.ts';
import { alreadyRegisteredMail, breachedPasswordMail, verificationMail } from '../../../mail/templates.ts';
import type { Mailer } from '../../../mail/index.ts';
import { breachedChecker } from '../breached/breached.ts';
import { issueEmailLink, appName } from '../links/links.ts';
import { consumeLimit } from '../limits.ts';
import { hashPassword, passwordProblem } from '../passwords.ts';
import { signupQueries, type PendingRow } from './queries.ts';
import { usersQueries } from '../users/queries.ts';
import { emitUserCreated } from '../users/events.ts';
import { allowedRedirect, stillAllowed } from '../redirects.ts';
import { envIdentity } from '../sessions/sessions.ts';
import { normaliseEmail } from '../tokens.ts';

export interface SignUpInput {
  envId: string;
  email: string;
  password: string;
  redirectUrl?: string | undefined;
  ip: string;
}

const sealContext = (pendingId: string): string => `signup:${pendingId}`;

export async function acceptSignUp(deps: { db: Knex; config: Config; jobs: Jobs }, input: SignUpInput): Promise<void> {
  const env = await envIdentity(deps.db, input.envId);
  await consumeLimit(deps.db, 'sign_up', input.envId, input.ip, env.settings.rate_limits.sign_up);
  const problem = passwordProblem(input.password, env.settings.require_second_factor);
  if (problem)
    throw new AppError('invalid_request', problem, {
      details: { fields: [{ field: 'body.password', message: problem }] },
    });
  const redirect = input.redirectUrl ? allowedRedirect(deps.config, env, input.redirectUrl) : null;
  const id = newId('signup');
  await deps.db.transaction(async (trx) => {
    await signupQueries(trx).insert({
      id,
      env_id: input.envId,
      email: input.email.trim(),
      redirect_url: redirect,
      password_sealed: seal(keyringFromConfig(deps.config), input.password, sealContext(id)),
    });
    await deps.jobs.enqueue(trx, 'identity.sign-up', { pending_id: id });
  });
}

/** Worker side. Idempotent: the decision is stored before mailing, so a retry mails the same thing. */
export async function processSignUp(
  deps: { db: Knex; config: Config; mailer: Mailer; log: Logger; jobs: AnyJobs },
  pendingId: string,
): Promise<void> {
  const { db } = deps;
  const pendings = signupQueries(db);
  let pending = await pendings.byId(pendingId);
  if (!pending) return; // already done
  const env = await envIdentity(db, pending.env_id);
  if (!pending.outcome) {
    const password = open(
      keyringFromConfig(deps.config),
      pending.password_sealed ?? '',
      sealContext(pending.id),
    ).toString();
    const q = usersQueries(db);
    const normalized = normaliseEmail(pending.email);
    let outcome: PendingRow['outcome'];
    let endUserId: string | null = null;
    const existing = await q.userByEmail(pending.env_id, normalized);
    if (existing) {
      outcome = 'exists';
      endUserId = existing.id;
    } else if (await breachedChecker(db, env.settings, deps.log).check(password)) outcome = 'breached';
    else {
      const passwordHash = await hashPassword(password);
      const user = await db.transaction(async (trx) => {
        const created = await usersQueries(trx).insertUser({
          env_id: pending!.env_id,
          email: pending!.email,
          email_normalized: normalized,
          password_hash: passwordHash,
          email_verified: false,
        });
        if (created) await emitUserCreated(trx, deps.jobs, created.env_id, created.id);
        return created;
      });
      outcome = user ? 'created' : 'exists';
      endUserId = user?.id ?? null;
    }
    await pendings.decide(pendingId, outcome, endUserId);
    pending = { ...pending, outcome, end_user_id: endUserId, password_sealed: null };
  }
  const app = appName(env);
  const redirect = stillAllowed(deps.config, env, pending.redirect_url);
  if (pending.outcome === 'created' && pending.end_user_id) {
    const link = await issueEmailLink(db, deps.config, env, pending.end_user_id, 'verify_email', redirect);
    await deps.mailer.send(verificationMail(pending.email, app, link), env);
  } else if (pending.outcome === 'exists') {
    // An address that never confirmed gets a fresh link instead: its owner lost the first mail.
    const existing = pending.end_user_id
      ? await usersQueries(db).userById(pending.env_id, pending.end_user_id)
      : undefined;
    if (existing && !existing.email_verified_time) {
      const link = await issueEmailLink(db, deps.config, env, existing.id, 'verify_email', redirect);
      await deps.mailer.send(verificationMail(existing.email, app, link), env);
    } else {
      await deps.mailer.send(alreadyRegisteredMail(pending.email, app), env);
    }
  } else if (pending.outcome === 'breached') {
    await deps.mailer.send(breachedPasswordMail(pending.email, app), env);
  }
  await pendings.remove(pendingId);
  deps.log.info({ pending_id: pendingId, outcome: pending.outcome }, 'sign-up processed');
}
