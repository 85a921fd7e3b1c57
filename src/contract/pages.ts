// Every list pages the same way (docs/api.md "Lists", Google AIP-158): `page_size` and an opaque
// `page_token` in, the items and `next_page_token` out. The token is the keyset position of the
// last item as JSON, signed with HMAC-SHA-256 so that a tampered token is refused with
// invalid_request instead of being read as a position. Each list names its own `purpose`, bound
// into the MAC, so a token of one list is refused by another.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { derivedKey, keyringFromConfig } from '../crypto.ts';
import { AppError } from '../app-error.ts';

export const pageQuery = z.object({
  page_size: z.coerce.number().int().min(1).max(1000).default(50),
  page_token: z.string().max(512).optional(),
});
export type PageQuery = z.output<typeof pageQuery>;

/** `{ [collection]: Item[], next_page_token? }`, the shape of every list answer. */
export function pageOf<C extends string, I extends z.ZodType>(collection: C, item: I) {
  return z.object({ [collection]: z.array(item), next_page_token: z.string().optional() } as {
    [K in C]: z.ZodArray<I>;
  } & { next_page_token: z.ZodOptional<z.ZodString> });
}

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

/** How one list orders its rows: the position of a row, and what a token may carry. */
export interface Keyset<Row, P> {
  purpose: string;
  positionOf(row: Row): P;
  isPosition(v: unknown): v is P;
}

/** Lists sorted by id alone (ULIDs sort by time): the position is the last id. */
export function byId<Row extends { id: string }>(purpose: string): Keyset<Row, string> {
  return { purpose, positionOf: (row) => row.id, isPosition: (v): v is string => typeof v === 'string' };
}

/** A sort time and an id, for lists ordered by a time that several rows may share. */
export interface TimePosition {
  t: string;
  id: string;
}

export function byTimeAndId<Row>(purpose: string, positionOf: (row: Row) => TimePosition): Keyset<Row, TimePosition> {
  return {
    purpose,
    positionOf,
    isPosition: (v): v is TimePosition =>
      typeof v === 'object' &&
      v !== null &&
      typeof (v as TimePosition).t === 'string' &&
      typeof (v as TimePosition).id === 'string',
  };
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
