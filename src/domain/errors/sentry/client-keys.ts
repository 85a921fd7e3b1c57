// Sentry client keys (docs/api.md "Sentry compatibility"): the DSN an SDK is configured with,
// `<scheme>://<public key>@<host>/<project number>`. The public key is 32 lower-case hex (what
// Sentry's own keys look like; SDKs and tunnels parse it), random (128 bits), found by its SHA-256
// and kept sealed for lists; the project number is the environment's own.
import { randomBytes } from 'node:crypto';
import { open, seal, sha256, type Keyring } from '../../../crypto.ts';
import type { Db } from '../../../db.ts';
import { clientKeyQueries, type ClientKeyRow } from './queries.ts';

export interface ClientKey {
  id: string;
  public_key: string;
  dsn: string;
  create_time: string;
  rate_limit?: { count: number; window_seconds: number };
}

const sealContext = (id: string) => `client-key:${id}`;

export const publicKeyPattern = /^[0-9a-f]{32}$/;

export const hashPublicKey = (publicKey: string): Buffer => sha256(`sentry-public-key:${publicKey}`);

/** `http://<key>@host[:port]/<n>` from the service's base URL (its scheme and host only). */
export function dsnFor(baseUrl: string, publicKey: string, projectNumber: string): string {
  const url = new URL(baseUrl);
  return `${url.protocol}//${publicKey}@${url.host}/${projectNumber}`;
}

export const openPublicKey = (keyring: Keyring, row: Pick<ClientKeyRow, 'id' | 'public_key_sealed'>): string =>
  open(keyring, row.public_key_sealed, sealContext(row.id)).toString('utf8');

export function presentClientKey(
  row: ClientKeyRow,
  keyring: Keyring,
  baseUrl: string,
  projectNumber: string,
): ClientKey {
  const publicKey = openPublicKey(keyring, row);
  const key: ClientKey = {
    id: row.id,
    public_key: publicKey,
    dsn: dsnFor(baseUrl, publicKey, projectNumber),
    create_time: row.create_time.toISOString(),
  };
  if (row.rate_limit_count !== null && row.rate_limit_window_seconds !== null)
    key.rate_limit = { count: row.rate_limit_count, window_seconds: row.rate_limit_window_seconds };
  return key;
}

export async function createClientKey(
  db: Db,
  keyring: Keyring,
  envId: string,
  rateLimit?: { count: number; window_seconds: number },
): Promise<{ row: ClientKeyRow; publicKey: string }> {
  const publicKey = randomBytes(16).toString('hex');
  const row = await clientKeyQueries(db).insert({
    env_id: envId,
    public_key_hash: hashPublicKey(publicKey),
    public_key_sealed: (id) => seal(keyring, publicKey, sealContext(id)),
    rate_limit: rateLimit,
  });
  return { row, publicKey };
}
