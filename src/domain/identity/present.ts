// End users, their sessions and sign-ins as the API shows them (contract/identity.ts), the keysets
// their lists page by, and the `end_user.*` webhook events, whose data is the same resource.
import { byId } from '../../contract/pages.ts';
import type { EndUser, Session, SessionState, SignIn } from '../../contract/identity.ts';
import type { WebhookEvent } from '../webhooks/outbox/catalogue.ts';
import type { SessionRow } from './sessions/queries.ts';
import type { EndUserRow, SignInRow } from './users/queries.ts';

/** Identity lists page by id (ULIDs), newest first; one purpose each, so tokens never cross lists. */
export const endUserPages = byId<EndUserRow>('end_users');
export const sessionPages = byId<SessionRow>('sessions');
export const signInPages = byId<SignInRow>('sign_ins');

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
    locked: u.locked_time !== null,
    locked_time: iso(u.locked_time),
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

type Env = { id: string; name: string };

export function endUserCreatedEvent(env: Env, u: EndUserRow): WebhookEvent {
  return { envId: env.id, type: 'end_user.created', subject: u.id, data: endUserResource(env.name, u) };
}

export function endUserDeletedEvent(env: Env, id: string): WebhookEvent {
  return {
    envId: env.id,
    type: 'end_user.deleted',
    subject: id,
    data: { id, name: `${env.name}/end_users/${id}`, deleted: true },
  };
}
