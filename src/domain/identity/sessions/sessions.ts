// Sessions: an opaque bearer token (tokens.ts) stored as SHA-256, with an idle lifetime that each
// use slides forward and an absolute lifetime that nothing extends (OWASP Session Management
// Cheat Sheet, "Session Expiration"). Revocation and user deletion end a session at once: every
// resolve reads the row.
import type { Db } from '../../../db.ts';
import { AppError } from '../../../app-error.ts';
import { newId } from '../../../ids.ts';
import type { EnvMode } from '../../tenancy/keys.ts';
import { tenancyQueries } from '../../tenancy/queries.ts';
import { type SessionRow, sessionQueries } from './queries.ts';
import { type EndUserRow, usersQueries } from '../users/queries.ts';
import { userLocked } from '../users/lock.ts';
import { identitySettings, type IdentitySettings } from '../settings.ts';
import { hashToken, isTokenShape, newToken } from '../tokens.ts';

/** Writing last_active_time on every request would turn reads into writes; once a minute is enough. */
const touchEverySeconds = 60;

export interface SignInContext {
  ip: string | null;
  userAgent: string | null;
}

export interface EnvIdentity {
  envId: string;
  envName: string;
  mode: EnvMode;
  settings: IdentitySettings;
}

export async function envIdentity(db: Db, envId: string): Promise<EnvIdentity> {
  const env = await tenancyQueries(db).envById(envId);
  if (!env) throw new AppError('not_found', 'the environment no longer exists');
  return { envId, envName: env.name, mode: env.mode, settings: identitySettings(env.settings) };
}

export async function createSession(
  db: Db,
  env: EnvIdentity,
  endUserId: string,
  method: string,
  from: SignInContext,
): Promise<{ session: SessionRow; token: string }> {
  const token = newToken('session');
  const session = await sessionQueries(db).insertSession({
    id: newId('sess'),
    env_id: env.envId,
    end_user_id: endUserId,
    method,
    ip: from.ip,
    user_agent: from.userAgent?.slice(0, 500) ?? null,
    token_hash: hashToken(token),
    idle_seconds: env.settings.session_idle_seconds,
    lifetime_seconds: env.settings.session_lifetime_seconds,
  });
  // Every sign-in path ends here; a user locked meanwhile (or deleted) gets no session.
  if (!session) throw userLocked();
  return { session, token };
}

export interface ResolvedSession {
  session: SessionRow;
  user: EndUserRow;
}

/** The live session of a bearer token, or undefined for anything else (malformed, unknown, ended). */
export async function resolveSession(
  db: Db,
  token: string,
  now: Date = new Date(),
): Promise<ResolvedSession | undefined> {
  if (!isTokenShape('session', token)) return undefined;
  const sessions = sessionQueries(db);
  const users = usersQueries(db);
  const session = await sessions.liveSession(hashToken(token));
  if (!session) return undefined;
  const user = await users.userById(session.env_id, session.end_user_id);
  // Locking revoked every session already; this holds should one have slipped past.
  if (!user || user.locked_time) return undefined;
  if (now.getTime() - session.last_active_time.getTime() > touchEverySeconds * 1000)
    await sessions.touchSession(session.id);
  return { session, user };
}
