// Console sessions (docs/api.md "Console"). Signing in with a secret key opens a server-side
// session bound to the key's environment and scopes; the browser holds only the session's random
// token, never the key. Sessions last 12 hours at most (as a working day in a dashboard), end on
// "Sign out", end at once when their key is revoked, and an operator can end them from outside the
// browser (`cairn admin console-sessions revoke`): a session opened from an operator's link has no
// key to revoke.
import { newId } from '../../ids.ts';
import type { Db } from '../../db.ts';
import { secretScopes, type SecretScope } from '../tenancy/keys.ts';
import { hashToken, isTokenShape, newToken } from '../identity/tokens.ts';
import {
  consoleSessionListQueries,
  consoleSessionQueries,
  type ConsoleSessionListRow,
  type OpenedBy,
} from './queries.ts';

export const consoleSessionHours = 12;

export interface ConsoleSession {
  id: string;
  envId: string;
  envName: string;
  scopes: readonly SecretScope[];
}

/** Opens a session for the environment (with the key's scopes, or every scope without a key); answers its token. */
export async function openConsoleSession(
  db: Db,
  envId: string,
  keyId: string | null,
  openedBy: OpenedBy,
  now = new Date(),
): Promise<string> {
  const token = newToken('console_session');
  await consoleSessionQueries(db).insertSession({
    id: newId('cs'),
    token_hash: hashToken(token),
    env_id: envId,
    key_id: keyId,
    opened_by: openedBy,
    create_time: now,
    last_use_time: now,
    expire_time: new Date(now.getTime() + consoleSessionHours * 3600_000),
  });
  return token;
}

export async function resolveConsoleSession(db: Db, token: string): Promise<ConsoleSession | undefined> {
  if (!isTokenShape('console_session', token)) return undefined;
  const q = consoleSessionQueries(db);
  const row = await q.liveSession(hashToken(token));
  if (!row) return undefined;
  if (row.stale) await q.touchSession(row.id);
  return { id: row.id, envId: row.env_id, envName: row.env_name, scopes: row.key_scopes ?? secretScopes };
}

export async function endConsoleSession(db: Db, token: string): Promise<void> {
  if (!isTokenShape('console_session', token)) return;
  await consoleSessionQueries(db).endSession(hashToken(token));
}

/** A live session as an operator sees it (`cairn admin console-sessions list`). */
export interface ConsoleSessionView {
  id: string;
  opened_by: OpenedBy;
  key_id: string | null;
  create_time: string;
  last_use_time: string;
  expire_time: string;
}

const view = (r: ConsoleSessionListRow): ConsoleSessionView => ({
  id: r.id,
  opened_by: r.opened_by,
  key_id: r.key_id,
  create_time: r.create_time.toISOString(),
  last_use_time: r.last_use_time.toISOString(),
  expire_time: r.expire_time.toISOString(),
});

export async function listConsoleSessions(db: Db, envId: string): Promise<ConsoleSessionView[]> {
  return (await consoleSessionListQueries(db).listSessions(envId)).map(view);
}

/** Ends one live session of the environment (by id) or all of them; answers the ids ended. */
export async function revokeConsoleSessions(db: Db, envId: string, id?: string): Promise<string[]> {
  return consoleSessionListQueries(db).endSessions(envId, id);
}
