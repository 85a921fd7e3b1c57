// Request and response schemas of the identity routes (docs/api.md "Identity"). The presenters
// (domain/identity/present.ts) turn stored rows into these shapes; the fields are ours, following
// Clerk's and AIP-122's names.
import { z } from 'zod';
import { pageOf, pageQuery } from './pages.ts';
import { resource } from './resource.ts';
import { envParams } from './tenancy.ts';

export { envParams, pageQuery };

/** NIST SP 800-63B rev 4 §3.1.1.2: at least 64 characters allowed; we take 256 (code points). */
export const maxPasswordLength = 256;

export const email = z.email().max(320);
// The policy's minimum depends on the environment and is checked by the domain; this only bounds.
export const password = z
  .string()
  .min(1)
  .max(maxPasswordLength * 4);
export const redirectUrl = z.string().max(2048);

export const endUserParams = envParams.extend({
  end_user: z.string().regex(/^eu_[0-9a-z]{26}$/, 'an end user id, eu_…'),
});

export const endUserSessionParams = endUserParams.extend({
  session: z.string().regex(/^sess_[0-9a-z]{26}$/, 'a session id, sess_…'),
});

export const endUser = resource('EndUser', {
  name: z.string().meta({ example: 'orgs/acme/projects/shop/envs/prod/end_users/eu_01jd…' }),
  id: z.string(),
  email: z.string(),
  email_verified: z.boolean(),
  has_password: z.boolean(),
  totp_enabled: z.boolean(),
  create_time: z.string(),
  update_time: z.string(),
  last_sign_in_time: z.string().nullable(),
  /** Locked by the operator: no sign-in until unlocked (`:lock`, `:unlock`). */
  locked: z.boolean(),
  locked_time: z.string().nullable(),
});
export type EndUser = z.output<typeof endUser>;

const sessionStateSchema = z.enum(['active', 'revoked', 'expired']);
export type SessionState = z.output<typeof sessionStateSchema>;

export const session = resource('Session', {
  name: z.string(),
  id: z.string(),
  end_user_id: z.string(),
  state: sessionStateSchema,
  method: z.string(),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  create_time: z.string(),
  last_active_time: z.string(),
  idle_expire_time: z.string(),
  expire_time: z.string(),
  revoke_time: z.string().nullable(),
});
export type Session = z.output<typeof session>;

export const signIn = resource('SignIn', {
  id: z.string(),
  time: z.string(),
  method: z.string(),
  outcome: z.string(),
  ip: z.string().nullable(),
  user_agent: z.string().nullable(),
});
export type SignIn = z.output<typeof signIn>;

export const sessionAnswer = z
  .object({ session, user: endUser, session_token: z.string() })
  .meta({ id: 'SessionWithToken' });
export type SessionWithToken = z.output<typeof sessionAnswer>;

export const factorProof = z.object({ type: z.enum(['totp', 'recovery_code']), code: z.string().min(1).max(64) });
export type FactorProof = z.input<typeof factorProof>;

export const accepted = z.object({ accepted: z.literal(true) });

export const endUserList = pageOf('end_users', endUser);
export const sessionList = pageOf('sessions', session);
export const signInList = pageOf('sign_ins', signIn);
