// Error-tracking lists page by keyset (sort time, id) in signed tokens (src/pagination.ts).
import { readPageToken, signPageToken } from '../../../pagination.ts';

export interface PageKey {
  /** The sort value of the last item (an ISO time) and its id. */
  t: string;
  id: string;
}

const isPageKey = (v: unknown): v is PageKey =>
  typeof v === 'object' && v !== null && typeof (v as PageKey).t === 'string' && typeof (v as PageKey).id === 'string';

export const encodePageToken = (secret: Buffer, key: PageKey): string =>
  signPageToken(secret, 'error-tracking', { t: key.t, id: key.id });

export const decodePageToken = (secret: Buffer, token: string | undefined): PageKey | undefined =>
  readPageToken(secret, 'error-tracking', token, isPageKey);
