// The public shapes of end users, sessions and sign-ins (SPEC.md leaves their fields open; these
// follow Clerk's and AIP-122's names).
import type { EndUserRow, SessionRow, SignInRow } from './queries.ts';

export interface EndUser {
  name: string;
  id: string;
  email: string;
  email_verified: boolean;
  has_password: boolean;
  totp_enabled: boolean;
  create_time: string;
  update_time: string;
  last_sign_in_time: string | null;
}

export type SessionState = 'active' | 'revoked' | 'expired';

export interface Session {
  name: string;
  id: string;
  end_user_id: string;
  state: SessionState;
  method: string;
  ip: string | null;
  user_agent: string | null;
  create_time: string;
  last_active_time: string;
  idle_expire_time: string;
  expire_time: string;
  revoke_time: string | null;
}

export interface SignIn {
  id: string;
  time: string;
  method: string;
  outcome: string;
  ip: string | null;
  user_agent: string | null;
}

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
