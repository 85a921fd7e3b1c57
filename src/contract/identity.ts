// Request and response schemas of the identity routes (docs/api.md "Identity").
// The presenters turn stored rows into these shapes; the fields are ours, these follow
// Clerk's and AIP-122's names.
import { z } from 'zod';
import { maxPasswordLength } from '../domain/identity/passwords.ts';
import type { SessionRow } from '../domain/identity/sessions/queries.ts';
import type { EndUserRow, SignInRow } from '../domain/identity/users/queries.ts';
import { byId, pageOf, pageQuery } from './pages.ts';
import { envParams } from './tenancy.ts';

export { envParams, pageQuery };

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

export const endUser = z
  .object({
    name: z.string().meta({ example: 'orgs/acme/projects/shop/envs/prod/end_users/eu_01jd…' }),
    id: z.string(),
    email: z.string(),
    email_verified: z.boolean(),
    has_password: z.boolean(),
    totp_enabled: z.boolean(),
    create_time: z.string(),
    update_time: z.string(),
    last_sign_in_time: z.string().nullable(),
  })
  .meta({ id: 'EndUser' });

const sessionStateSchema = z.enum(['active', 'revoked', 'expired']);

export const session = z
  .object({
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
  })
  .meta({ id: 'Session' });

export const signIn = z
  .object({
    id: z.string(),
    time: z.string(),
    method: z.string(),
    outcome: z.string(),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
  })
  .meta({ id: 'SignIn' });

export const sessionAnswer = z
  .object({ session, user: endUser, session_token: z.string() })
  .meta({ id: 'SessionWithToken' });

export const factorProof = z.object({ type: z.enum(['totp', 'recovery_code']), code: z.string().min(1).max(64) });

export const accepted = z.object({ accepted: z.literal(true) });

export const endUserList = pageOf('end_users', endUser);
export const sessionList = pageOf('sessions', session);
export const signInList = pageOf('sign_ins', signIn);

/** Identity lists page by id (ULIDs), newest first; one purpose each, so tokens never cross lists. */
export const endUserPages = byId<EndUserRow>('end_users');
export const sessionPages = byId<SessionRow>('sessions');
export const signInPages = byId<SignInRow>('sign_ins');

export type EndUser = z.output<typeof endUser>;
export type SessionState = z.output<typeof sessionStateSchema>;
export type Session = z.output<typeof session>;
export type SignIn = z.output<typeof signIn>;
export type SessionWithToken = z.output<typeof sessionAnswer>;
export type FactorProof = z.input<typeof factorProof>;

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function endUserResource(envName: string, u: EndUserRow): EndUser {
  return {
    name: `${envName}/end_users/${u.id}`,
    id: u.id,
    email: u.email,
    email_verified: u.email_verified_time !== null,
    has_password: u.password_hash !== null,
    totp_enabled: u.totp_active,
    create_time: u.create_time.toISOString(),
    update_time: u.update_time.toISOString(),
    last_sign_in_time: iso(u.last_sign_in_time),
  };
}

export function sessionState(s: SessionRow, now: Date = new Date()): SessionState {
  if (s.revoke_time) return 'revoked';
  if (s.expire_time <= now || s.idle_expire_time <= now) return 'expired';
  return 'active';
}

export function sessionResource(envName: string, s: SessionRow, now?: Date): Session {
  return {
    name: `${envName}/end_users/${s.end_user_id}/sessions/${s.id}`,
    id: s.id,
    end_user_id: s.end_user_id,
    state: sessionState(s, now),
    method: s.method,
    ip: s.ip,
    user_agent: s.user_agent,
    create_time: s.create_time.toISOString(),
    last_active_time: s.last_active_time.toISOString(),
    idle_expire_time: s.idle_expire_time.toISOString(),
    expire_time: s.expire_time.toISOString(),
    revoke_time: iso(s.revoke_time),
  };
}

export function signInResource(r: SignInRow): SignIn {
  return {
    id: r.id,
    time: r.time.toISOString(),
    method: r.method,
    outcome: r.outcome,
    ip: r.ip,
    user_agent: r.user_agent,
  };
}
