// Opaque page tokens (CONTRACT.md "Lists"): the last id seen, signed so a tampered token is
// refused with invalid_request instead of silently paging from somewhere else.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.ts';

export interface PageRequest {
  page_size?: number | undefined;
  page_token?: string | undefined;
}

function sign(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(`page:${payload}`).digest('base64url').slice(0, 22);
}

export function encodePageToken(key: Buffer, lastId: string): string {
  const payload = Buffer.from(lastId).toString('base64url');
  return `${payload}.${sign(key, payload)}`;
}

export function decodePageToken(key: Buffer, token: string | undefined): string | undefined {
  if (!token) return undefined;
  const [payload, mac] = token.split('.');
  const expected = payload ? sign(key, payload) : '';
  if (!payload || !mac || mac.length !== expected.length || !timingSafeEqual(Buffer.from(mac), Buffer.from(expected))) {
    throw new AppError('invalid_request', 'page_token is not valid; pass the next_page_token of the previous answer unchanged');
  }
  return Buffer.from(payload, 'base64url').toString();
}

/** Rows were fetched with one extra; answers the page and the token of the next one, if any. */
export function paginate<T extends { id: string }>(key: Buffer, rows: T[], pageSize: number): { items: T[]; next?: string } {
  if (rows.length <= pageSize) return { items: rows };
  const items = rows.slice(0, pageSize);
  return { items, next: encodePageToken(key, items[items.length - 1]!.id) };
}
