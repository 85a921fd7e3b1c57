// One page of a list (docs/api.md "Lists", Google AIP-158): the opaque `page_token` is the keyset
// position of the last item as JSON, signed with HMAC-SHA-256 so that a tampered token is refused
// with invalid_request instead of being read as a position. Each list names its own `purpose`
// (contract/pages.ts Keyset), bound into the MAC, so a token of one list is refused by another.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.ts';
import { derivedKey, keyringFromConfig } from '../crypto.ts';
import { AppError } from '../app-error.ts';
import type { Keyset, PageQuery } from '../contract/pages.ts';

type KeyConfig = Pick<Config, 'encryptionKeys' | 'CAIRN_ENCRYPTION_KEY_ID'>;

/**
 * The key every list signs its tokens with (crypto.ts derivedKey). Tokens of a rotated-out key are
 * refused like tampered ones: a client starts its list again.
 */
export function pageTokenKey(config: KeyConfig): Buffer {
  return derivedKey(keyringFromConfig(config), 'cairn page tokens');
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

export interface Page<Row> {
  items: Row[];
  next_page_token?: string;
}

/**
 * One page of a list: reads the token, fetches one row more than asked to learn whether another
 * page follows, and signs the position of the last row kept.
 */
export async function paginate<Row, P>(
  config: KeyConfig,
  query: PageQuery,
  keyset: Keyset<Row, P>,
  fetch: (after: P | undefined, limit: number) => Promise<Row[]>,
): Promise<Page<Row>> {
  const key = pageTokenKey(config);
  const after = readPageToken(key, keyset.purpose, query.page_token, keyset.isPosition);
  const rows = await fetch(after, query.page_size + 1);
  if (rows.length <= query.page_size) return { items: rows };
  const items = rows.slice(0, query.page_size);
  return { items, next_page_token: signPageToken(key, keyset.purpose, keyset.positionOf(items.at(-1)!)) };
}
