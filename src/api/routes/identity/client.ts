// The client API (docs/api.md "Client API", "Identity"): called from the application's
// pages with the publishable key, or with the end user's session bearer. Handlers stay thin.
import type { Context } from 'koa';
import { z } from 'zod';
import { AppError } from '../../../app-error.ts';
import { acceptSignUp } from '../../../domain/identity/signup/signup.ts';
import { confirmPasswordReset, requestPasswordReset, verifyEmail } from '../../../domain/identity/links/links.ts';
import { consumeLimit } from '../../../domain/identity/limits.ts';
import { signInWithPassword } from '../../../domain/identity/signin.ts';
import { sessionQueries } from '../../../domain/identity/sessions/queries.ts';
import { redeemTicket } from '../../../domain/identity/tickets/tickets.ts';
import type { SessionState } from './session-auth.ts';
import { clientFrom } from '../../../http/client.ts';
import { defineRoute } from '../../../http/route.ts';
import {
  accepted,
  email,
  endUser,
  factorProof,
  password,
  redirectUrl,
  session,
  sessionAnswer,
} from '../../../contract/identity.ts';
import { endUserResource, sessionResource } from '../../../domain/identity/present.ts';
import { secretKey } from '../route-parts.ts';

const signInDescription =
  'Checks the password (argon2id; 10 failures for one identifier lock it for 15 minutes, 423 locked_out) and answers a two-minute ticket in server mode, or the session and its bearer in browser mode. ' +
  'A wrong identifier or password is 401 unauthorized; an unverified email 403 forbidden (email_not_verified); a user with active TOTP and no proof 401 mfa_required, answered by sending factor_proofs. ' +
  'Limited per client address (429 rate_limited).';

export function currentSession(ctx: Context): NonNullable<SessionState['identitySession']> {
  const resolved = (ctx.state as SessionState).identitySession;
  if (!resolved) throw new AppError('unauthorized', 'no live session');
  return resolved;
}

export const signUp = defineRoute({
  method: 'post',
  path: '/v1/client/sign-up',
  operationId: 'signUp',
  description:
    'Answers 202 for every well-formed request, so whether the address has an account is never revealed; a worker then mails a verification link, a notice that someone tried the address, or a refusal of a breached password. ' +
    'An email that is not an address, a password outside the policy (15-256 characters, 8 with require_second_factor) or a redirect_url the environment does not allow is 400 invalid_request. ' +
    'Limited per client address (429 rate_limited).',
  example: {
    email: 'ada@example.com',
    password: 'correct horse battery staple',
    redirect_url: 'https://app.example.com/welcome',
  },
  tags: ['Client'],
  auth: 'publishable',
  summary: 'Sign up with email and password; always 202, whether or not the address has an account',
  body: z.object({ email, password, redirect_url: redirectUrl.optional() }),
  response: { status: 202, description: 'Accepted; the worker mails the verification link', schema: accepted },
  async handle({ body, principal, deps, ctx }) {
    await acceptSignUp(deps, {
      envId: principal.envId,
      email: body.email,
      password: body.password,
      redirectUrl: body.redirect_url,
      ip: clientFrom(ctx).ip,
    });
    return { accepted: true as const };
  },
});

export const verifyEmailRoute = defineRoute({
  method: 'get',
  path: '/v1/client/verify-email',
  operationId: 'verifyEmail',
  description:
    "Verifies the address of the link's token (one use, 24 hours) and redirects (302) to the sign-up's redirect_url with email_verified=true, or to the Account Portal's /verify-email. " +
    'An unknown, used or expired link redirects to /verify-email?status=invalid.',
  tags: ['Client'],
  auth: 'none',
  summary: 'Follow the emailed verification link: verifies the address once and redirects',
  query: z.object({ token: z.string().max(200) }),
  response: {
    status: 302,
    description: "Redirect to the sign-up's redirect_url (email_verified=true) or the Account Portal",
    schema: z.string().optional(),
  },
  async handle({ query, deps, ctx }) {
    await consumeLimit(deps.db, 'verify_email', 'any', clientFrom(ctx).ip);
    ctx.redirect(await verifyEmail(deps.db, deps.config, query.token));
    return undefined;
  },
});

export const signInPassword = defineRoute({
  method: 'post',
  path: '/v1/client/sign-in/password',
  operationId: 'signInWithPassword',
  description: signInDescription,
  example: {
    identifier: 'ada@example.com',
    password: 'correct horse battery staple',
    session_mode: 'server',
    factor_proofs: [{ type: 'totp', code: '492039' }],
  },
  tags: ['Client'],
  auth: 'publishable',
  summary: 'Password sign-in: a ticket in server mode, a session bearer in browser mode',
  body: z.object({
    identifier: z.string().min(1).max(320),
    password: z.string().max(1024),
    session_mode: z.enum(['server', 'browser']).default('server'),
    factor_proofs: z.array(factorProof).max(3).default([]),
  }),
  response: {
    status: 200,
    description: 'Signed in',
    schema: z.union([z.object({ ticket: z.string(), expires_at: z.string() }), sessionAnswer]),
  },
  async handle({ body, principal, deps, ctx }) {
    const from = clientFrom(ctx);
    const result = await signInWithPassword(deps, {
      envId: principal.envId,
      identifier: body.identifier,
      password: body.password,
      sessionMode: body.session_mode,
      factorProofs: body.factor_proofs,
      from,
    });
    if (result.mode === 'server') return { ticket: result.ticket, expires_at: result.expires_at };
    return {
      session: sessionResource(result.envName, result.session),
      user: endUserResource(result.envName, result.user),
      session_token: result.token,
    };
  },
});

export const redeem = defineRoute({
  method: 'post',
  path: '/v1/client/tickets:redeem',
  operationId: 'redeemTicket',
  ...secretKey('Client', 'auth:write'),
  summary: "Redeem a ticket for a session, from the application's server (two minutes, one use)",
  description:
    "Exchanges a ticket of server-mode sign-in for a session and its bearer, which the application's server keeps in an HttpOnly cookie. " +
    'A ticket lasts two minutes and works once: an unknown, expired, used or other-environment ticket is one 401 unauthorized. ' +
    'Limited per client address (429 rate_limited).',
  example: { ticket: 'cairn_tkt_4Vn8QzL2kT7wR1mX9bJ5cH3dP6sY0fGa' },
  body: z.object({ ticket: z.string().max(200) }),
  response: {
    status: 200,
    description: 'The new session and its bearer, for an HttpOnly cookie',
    schema: sessionAnswer,
  },
  async handle({ body, principal, deps, ctx }) {
    await consumeLimit(deps.db, 'redeem', principal.envId, clientFrom(ctx).ip);
    const r = await redeemTicket(deps.db, principal.envId, body.ticket);
    return {
      session: sessionResource(r.envName, r.session),
      user: endUserResource(r.envName, r.user),
      session_token: r.token,
    };
  },
});

export const getSession = defineRoute({
  method: 'get',
  path: '/v1/client/session',
  operationId: 'getCurrentSession',
  description:
    'Answers the session of the bearer (Authorization: Bearer cairn_sess_…, no publishable key) and its end user. ' +
    "A missing, unknown, revoked or expired session, or a deleted user's, is 401 unauthorized.",
  tags: ['Client'],
  auth: 'session',
  summary: 'The current session and its user',
  response: { status: 200, description: 'The session', schema: z.object({ session, user: endUser }) },
  handle({ principal, ctx }) {
    const { session: s, user } = currentSession(ctx);
    return { session: sessionResource(principal.envName, s), user: endUserResource(principal.envName, user) };
  },
});

export const signOut = defineRoute({
  method: 'post',
  path: '/v1/client/sign-out',
  operationId: 'signOut',
  description:
    "Revokes the bearer's session at once: later calls with it answer 401 unauthorized. The user's other sessions stay.",
  tags: ['Client'],
  auth: 'session',
  summary: 'End the current session',
  response: { status: 200, description: 'Signed out', schema: z.object({ signed_out: z.literal(true) }) },
  async handle({ deps, ctx }) {
    await sessionQueries(deps.db).revokeSession(currentSession(ctx).session.id);
    return { signed_out: true as const };
  },
});

export const passwordReset = defineRoute({
  method: 'post',
  path: '/v1/client/password-reset',
  operationId: 'requestPasswordReset',
  description:
    "Answers 202 whether or not the address has an account; an existing account is mailed redirect_url?reset_token=… (by default the portal's /reset-password), valid one hour and once. " +
    'A redirect_url the environment does not allow is 400 invalid_request; limited per client address (429 rate_limited).',
  example: { email: 'ada@example.com', redirect_url: 'https://app.example.com/reset-password' },
  tags: ['Client'],
  auth: 'publishable',
  summary: 'Mail a password-reset link; always 202, whether or not the address has an account',
  body: z.object({ email, redirect_url: redirectUrl.optional() }),
  response: { status: 202, description: 'Accepted', schema: accepted },
  async handle({ body, principal, deps, ctx }) {
    await requestPasswordReset(deps, {
      envId: principal.envId,
      email: body.email,
      redirectUrl: body.redirect_url,
      ip: clientFrom(ctx).ip,
    });
    return { accepted: true as const };
  },
});

export const passwordResetConfirm = defineRoute({
  method: 'post',
  path: '/v1/client/password-reset:confirm',
  operationId: 'confirmPasswordReset',
  description:
    'Sets the new password with the emailed token, checked as at sign-up (400 with details.reason breached_password for a breached one), marks the address verified and ends every session of the user. ' +
    'An unknown, expired or used token is 401 unauthorized; limited per client address (429 rate_limited).',
  example: { token: 'cairn_eml_9Xc2Lm7Qw4Rt8Zb1Nv5Kp3Hd6Jf0Sg2A', password: 'a new long passphrase 2026' },
  tags: ['Client'],
  auth: 'publishable',
  summary: 'Set a new password with the emailed token; ends every session of the user',
  body: z.object({ token: z.string().max(200), password }),
  response: { status: 200, description: 'Password changed', schema: z.object({ reset: z.literal(true) }) },
  async handle({ body, principal, deps, ctx }) {
    await consumeLimit(deps.db, 'password_reset', principal.envId, clientFrom(ctx).ip);
    await confirmPasswordReset(deps.db, principal.envId, body.token, body.password);
    return { reset: true as const };
  },
});

export const clientRoutes = [
  signUp,
  verifyEmailRoute,
  signInPassword,
  redeem,
  getSession,
  signOut,
  passwordReset,
  passwordResetConfirm,
];
