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

export function currentSession(ctx: Context): NonNullable<SessionState['identitySession']> {
  const resolved = (ctx.state as SessionState).identitySession;
  if (!resolved) throw new AppError('unauthorized', 'no live session');
  return resolved;
}

export const signUp = defineRoute({
  method: 'post',
  path: '/v1/client/sign-up',
  operationId: 'signUp',
  tags: ['Client'],
  auth: 'publishable',
  summary: 'Sign up with email and password; always 202, whether or not the address has an account',
  body: z.object({ email, password, redirect_url: redirectUrl.optional() }),
  example: {
    email: 'ada@example.com',
    password: 'correct horse battery staple',
    redirect_url: 'https://app.example.com/welcome',
  },
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
  tags: ['Client'],
  auth: 'publishable',
  summary: 'Password sign-in: a ticket in server mode, a session bearer in browser mode',
  body: z.object({
    identifier: z.string().min(1).max(320),
    password: z.string().max(1024),
    session_mode: z.enum(['server', 'browser']).default('server'),
    factor_proofs: z.array(factorProof).max(3).default([]),
  }),
  example: {
    identifier: 'ada@example.com',
    password: 'correct horse battery staple',
    session_mode: 'server',
    factor_proofs: [{ type: 'totp', code: '492039' }],
  },
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
  body: z.object({ ticket: z.string().max(200) }),
  example: { ticket: 'cairn_tkt_4Vn8QzL2kT7wR1mX9bJ5cH3dP6sY0fGa' },
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
  tags: ['Client'],
  auth: 'publishable',
  summary: 'Mail a password-reset link; always 202, whether or not the address has an account',
  body: z.object({ email, redirect_url: redirectUrl.optional() }),
  example: { email: 'ada@example.com', redirect_url: 'https://app.example.com/reset-password' },
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
  tags: ['Client'],
  auth: 'publishable',
  summary: 'Set a new password with the emailed token; ends every session of the user',
  body: z.object({ token: z.string().max(200), password }),
  example: { token: 'cairn_eml_9Xc2Lm7Qw4Rt8Zb1Nv5Kp3Hd6Jf0Sg2A', password: 'a new long passphrase 2026' },
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
