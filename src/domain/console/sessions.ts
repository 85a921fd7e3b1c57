// Console sessions (CONTRACT.md "Console"). Signing in with a secret key opens a server-side
// session bound to the key's environment and scopes; the browser holds only the session's random
// token, never the key. Sessions last 12 hours at most (as a working day in a dashboard), end on
// "Sign out", and end at once when their key is revoked.
import { newId } from '../../ids.ts';
import type { Db } from '../../db.ts';
import { secretScopes, type SecretScope } from '../tenancy/keys.ts';
import { hashToken, isTokenShape, newToken } from '../identity/tokens.ts';
import { consoleQueries } from './queries.ts';

export const consoleSessionHours = 12;

export interface ConsoleSession {
  id: string;
  envId: string;
  envName: string;
  scopes: readonly SecretScope[];
}

/** Opens a session for the environment (with the key's scopes, or every scope without a key); answers its token. */
export async function openConsoleSession(db: Db, envId: string, keyId: string | null): Promise<string> {
  const token = newToken('console_session');
  await consoleQueries(db).insertSession({
    id: newId('cs'),
    token_hash: hashToken(token),
    env_id: envId,
    key_id: keyId,
    expire_time: new Date(Date.now() + consoleSessionHours * 3600_000),
  });
  return token;
}

export async function resolveConsoleSession(db: Db, token: string): Promise<ConsoleSession | undefined> {
  if (!isTokenShape('console_session', token)) return undefined;
  const row = await consoleQueries(db).liveSession(hashToken(token));
  if (!row) return undefined;
  return { id: row.id, envId: row.env_id, envName: row.env_name, scopes: row.key_scopes ?? secretScopes };
}

export async function endConsoleSession(db: Db, token: string): Promise<void> {
  await consoleQueries(db).endSession(hashToken(token));
}
