// Identity lists page by the last id seen (ULIDs sort by time), in signed tokens (src/pagination.ts).
import { isString, readPageToken, signPageToken } from '../../pagination.ts';

export interface PageRequest {
  page_size?: number | undefined;
  page_token?: string | undefined;
}

export const encodePageToken = (key: Buffer, lastId: string): string => signPageToken(key, 'identity', lastId);

export const decodePageToken = (key: Buffer, token: string | undefined): string | undefined =>
  readPageToken(key, 'identity', token, isString);

/** Rows were fetched with one extra; answers the page and the token of the next one, if any. */
export function paginate<T extends { id: string }>(
  key: Buffer,
  rows: T[],
  pageSize: number,
): { items: T[]; next?: string } {
  if (rows.length <= pageSize) return { items: rows };
  const items = rows.slice(0, pageSize);
  return { items, next: encodePageToken(key, items[items.length - 1]!.id) };
}
