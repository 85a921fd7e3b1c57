// Who sent a Sentry request (docs/api.md "Sentry compatibility"): the DSN's public key, from the
// `sentry_key` query parameter (the JavaScript SDKs), the `X-Sentry-Auth` header (most others), or
// an envelope's `dsn` header (tunnels). The key must be live and belong to the environment whose
// number is in the path. Lookups are kept for 2 s per web process, so a revoked key is refused
// within 5 s (the contract's bound) without a query per event.
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import { consumeOrRefuse } from '../../../rate-limits.ts';
import { hashPublicKey, publicKeyPattern } from './client-keys.ts';
import { clientKeyQueries, type ResolvedClientKey } from './queries.ts';

/**
 * The fields of `X-Sentry-Auth: Sentry sentry_key=…, sentry_version=7, sentry_client=…`, read as
 * relay reads them (relay-server's request_meta.rs): comma-separated `name=value` pairs, blanks
 * around either ignored (and pairs separated by blanks alone, as some old clients wrote them); the `Sentry ` prefix (any case) is optional here, as the header of some
 * raven clients has none. Raven clients also send `sentry_timestamp` and, from a DSN of the form
 * `https://public:secret@host/n`, `sentry_secret`: relay reads the secret and checks it against
 * nothing, and so does Cairn, which neither stores nor logs it.
 */
export function parseAuthHeader(header: string | undefined): Record<string, string> {
  const fields: Record<string, string> = {};
  if (!header) return fields;
  // Pairs separated by commas, or only by blanks as some old clients wrote them; a value may be quoted.
  for (const m of header.slice(0, 4096).matchAll(/(?:^|[\s,])(sentry_\w{1,32})\s*=\s*(?:"([^"]*)"|([^\s,]*))/gi)) {
    const name = m[1]!.toLowerCase();
    const value = (m[2] ?? m[3] ?? '').trim();
    if (value !== '') fields[name] ??= value;
  }
  return fields;
}

/** The public key of an `X-Sentry-Auth` (or `Authorization: Sentry …`) header, or undefined. */
export const keyFromAuthHeader = (header: string | undefined): string | undefined => parseAuthHeader(header).sentry_key;

/**
 * The auth header of a Sentry request: `X-Sentry-Auth`, else an `Authorization` whose scheme is
 * `Sentry` (relay reads both, and the older raven clients send the latter).
 */
export function sentryAuthHeader(get: (name: string) => string): string | undefined {
  const header = get('x-sentry-auth');
  if (header) return header;
  const authorization = get('authorization');
  return /^\s*sentry\s/i.test(authorization) ? authorization : undefined;
}

/** The public key of a DSN (`https://<key>@host/<n>`), or undefined. */
export function keyFromDsn(dsn: unknown): string | undefined {
  if (typeof dsn !== 'string') return undefined;
  try {
    return decodeURIComponent(new URL(dsn).username) || undefined;
  } catch {
    return undefined;
  }
}

const ttlMs = 2000;
const cache = new WeakMap<Knex, Map<string, { at: number; key: ResolvedClientKey | undefined }>>();

async function resolve(db: Knex, publicKey: string): Promise<ResolvedClientKey | undefined> {
  let seen = cache.get(db);
  if (!seen) cache.set(db, (seen = new Map()));
  const hit = seen.get(publicKey);
  if (hit && Date.now() - hit.at < ttlMs) return hit.key;
  const key = await clientKeyQueries(db).resolve(hashPublicKey(publicKey));
  // Bounded: a flood of made-up keys empties the cache rather than growing it.
  if (seen.size >= 10_000) seen.clear();
  seen.set(publicKey, { at: Date.now(), key });
  return key;
}

/** The live key of `projectNumber`'s environment, or 401/403 saying what to fix. */
export async function authenticateClientKey(
  db: Knex,
  projectNumber: string,
  publicKey: string | undefined,
): Promise<ResolvedClientKey> {
  if (!publicKey)
    throw new AppError(
      'unauthorized',
      'no client key: send the DSN public key as sentry_key in the query or in X-Sentry-Auth',
    );
  if (!publicKeyPattern.test(publicKey))
    throw new AppError('unauthorized', 'the client key is not 32 lower-case hex characters: check the DSN');
  const key = await resolve(db, publicKey);
  if (!key) throw new AppError('unauthorized', 'unknown client key: check the DSN');
  if (key.revoke_time) throw new AppError('unauthorized', 'this client key was revoked: use a current DSN');
  if (key.project_number !== projectNumber)
    throw new AppError('forbidden', `this client key belongs to project ${key.project_number}, not ${projectNumber}`);
  return key;
}

/** The key's own rate limit, shared by every web process; 429 with the seconds to wait. */
export async function consumeKeyLimit(db: Knex, key: ResolvedClientKey, events: number): Promise<void> {
  const points = key.rate_limit_count;
  const seconds = key.rate_limit_window_seconds;
  if (points === null || seconds === null || events === 0) return;
  await consumeOrRefuse(db, { table: 'client_key_rate_limits', prefix: 'ck', points, seconds }, key.id, events, {
    message: `this client key's rate limit is ${points} events per ${seconds} s`,
    details: { scope: 'key' },
  });
}
