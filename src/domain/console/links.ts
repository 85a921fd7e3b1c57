// One-use console sign-in links (docs/api.md "Console"): printed by `cairn console`, `cairn admin
// console-link` and `npm start`, valid 5 minutes, opening one console session (with the scopes of
// the key that asked, or every scope for the operator). The token travels in the query, which
// request logs leave out (they log the path), and the page it lands on sends no Referer. Opening
// the link (a GET) only shows a page; its button POSTs the token, and only that uses it.
import type { Db } from '../../db.ts';
import { newId } from '../../ids.ts';
import { hashToken, isTokenShape, newToken } from '../identity/tokens.ts';
import { consoleLinkQueries, type ConsoleLinkState } from './queries.ts';
import { openConsoleSession } from './sessions.ts';

export const consoleLinkMinutes = 5;
export const consoleLinkPath = '/console/sign-in/link';

/**
 * The command that prints another link to an environment's console: `npm start`'s banner gives it
 * beside its link, and a used or expired link's page gives the same.
 */
export const consoleLinkCommand = (envName: string): string => `npx cairn admin console-link --env ${envName}`;

export interface ConsoleLink {
  url: string;
  expire_time: string;
}

export async function createConsoleLink(
  db: Db,
  baseUrl: string,
  envId: string,
  keyId: string | null,
  now = new Date(),
): Promise<ConsoleLink> {
  const token = newToken('console_link');
  const expire = new Date(now.getTime() + consoleLinkMinutes * 60_000);
  await consoleLinkQueries(db).insertLink({
    id: newId('cl'),
    token_hash: hashToken(token),
    env_id: envId,
    key_id: keyId,
    expire_time: expire,
  });
  return { url: `${baseUrl}${consoleLinkPath}?token=${token}`, expire_time: expire.toISOString() };
}

/**
 * What the link's page says before anything is used: the environment it opens and whether it still
 * would. Reading a link never uses it (a mail scanner or `curl` fetching it leaves it to the
 * person); undefined for a token no link has.
 */
export async function consoleLinkState(db: Db, token: string): Promise<ConsoleLinkState | undefined> {
  if (!isTokenShape('console_link', token)) return undefined;
  return consoleLinkQueries(db).linkState(hashToken(token));
}

/** Opens the link's session (its token), or undefined for a used, expired, revoked or unknown link. */
export async function redeemConsoleLink(db: Db, token: string): Promise<string | undefined> {
  if (!isTokenShape('console_link', token)) return undefined;
  return db.transaction(async (trx) => {
    const link = await consoleLinkQueries(trx).useLink(hashToken(token));
    return link ? openConsoleSession(trx, link.env_id, link.key_id, 'link') : undefined;
  });
}
