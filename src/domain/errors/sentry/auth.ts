// Who sent a Sentry request (docs/api.md "Sentry compatibility"): the DSN's public key, from the
// `sentry_key` query parameter (the JavaScript SDKs), the `X-Sentry-Auth` header (most others), or
// an envelope's `dsn` header (tunnels). The route kernel reads the first two (its `client-key`
// auth, src/http/middleware/client-key.ts) and asks `authenticateClientKey` through the app's
// hook; the envelope's is read here (`keyFromDsn`) and checked through the same hook. The key must
// be live and belong to the environment whose number is in the path. Lookups are kept for 2 s per
// web process, so a revoked key is refused within 5 s (the contract's bound) without a query per
// event.
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import { consumeOrRefuse } from '../../../rate-limits.ts';
import { hashPublicKey, publicKeyPattern } from './client-keys.ts';
import { clientKeyQueries, type ResolvedClientKey } from './queries.ts';

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

/** A live client key of the path's project: what an ingest needs of it. */
export interface ClientKeyGrant {
  keyId: string;
  envId: string;
  projectNumber: string;
  rateLimit: { count: number; windowSeconds: number } | undefined;
}

/** The live key of `projectNumber`'s environment, or 401/403 saying what to fix. */
export async function authenticateClientKey(
  db: Knex,
  projectNumber: string,
  publicKey: string | undefined,
): Promise<ClientKeyGrant> {
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
  const { rate_limit_count: count, rate_limit_window_seconds: windowSeconds } = key;
  return {
    keyId: key.id,
    envId: key.env_id,
    projectNumber: key.project_number,
    rateLimit: count !== null && windowSeconds !== null ? { count, windowSeconds } : undefined,
  };
}

/** The key's own rate limit, shared by every web process; 429 with the seconds to wait. */
export async function consumeKeyLimit(db: Knex, key: ClientKeyGrant, events: number): Promise<void> {
  if (!key.rateLimit || events === 0) return;
  const { count: points, windowSeconds: seconds } = key.rateLimit;
  await consumeOrRefuse(db, { table: 'client_key_rate_limits', prefix: 'ck', points, seconds }, key.keyId, events, {
    message: `this client key's rate limit is ${points} events per ${seconds} s`,
    details: { scope: 'key' },
  });
}
