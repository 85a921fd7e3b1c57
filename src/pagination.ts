// Opaque page tokens for every list (CONTRACT.md "Lists"): the keyset position as JSON, signed with
// HMAC-SHA-256 so that a tampered token is refused with invalid_request instead of being read as a
// position. `purpose` is bound into the MAC, so a token of one list is refused by another.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Config } from './config.ts';
import { AppError } from './errors.ts';

const keys = new WeakMap<Config, Buffer>();

/**
 * The key every list signs its tokens with: derived from the current service key for this one use
 * (HKDF, RFC 5869), so the data-encryption key itself never signs anything a client holds. Tokens
 * of a rotated-out key are refused like tampered ones: a client starts its list again.
 */
export function pageTokenKey(config: Pick<Config, 'encryptionKeys' | 'CAIRN_ENCRYPTION_KEY_ID'>): Buffer {
  let key = keys.get(config as Config);
  if (!key) {
    const root = config.encryptionKeys.get(config.CAIRN_ENCRYPTION_KEY_ID)!;
    key = Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), 'cairn page tokens', 32));
    keys.set(config as Config, key);
  }
  return key;
}

function mac(key: Buffer, purpose: string, body: string): Buffer {
  return createHmac('sha256', key).update(`cairn page token\n${purpose}\n`).update(body).digest().subarray(0, 16);
}

export function signPageToken(key: Buffer, purpose: string, position: unknown): string {
  const body = Buffer.from(JSON.stringify(position)).toString('base64url');
  return `${body}.${mac(key, purpose, body).toString('base64url')}`;
}

/** The position a token carries; undefined for no token; invalid_request for anything else. */
export function readPageToken<T>(
  key: Buffer,
  purpose: string,
  token: string | undefined,
  isPosition: (v: unknown) => v is T,
): T | undefined {
  if (token === undefined || token === '') return undefined;
  const refuse = () =>
    new AppError(
      'invalid_request',
      'page_token is not valid; pass the next_page_token of the previous answer unchanged',
      {
        details: { fields: [{ field: 'query.page_token', message: 'not a token this list returned' }] },
      },
    );
  const [body, sig] = token.split('.');
  const given = Buffer.from(sig ?? '', 'base64url');
  const want = body ? mac(key, purpose, body) : undefined;
  if (!body || !want || given.length !== want.length || !timingSafeEqual(given, want)) throw refuse();
  const position: unknown = JSON.parse(Buffer.from(body, 'base64url').toString());
  if (!isPosition(position)) throw refuse();
  return position;
}

export const isString = (v: unknown): v is string => typeof v === 'string';
