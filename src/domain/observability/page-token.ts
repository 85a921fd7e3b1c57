// Opaque page tokens (CONTRACT.md "Lists"): the keyset position, signed with a key derived from
// the service key, so a tampered token is refused as invalid_request instead of read as a position.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.ts';

export interface PageKey {
  /** The sort value of the last item (an ISO time) and its id. */
  t: string;
  id: string;
}

function mac(secret: Buffer, body: string): Buffer {
  return createHmac('sha256', secret).update('cairn page token\n').update(body).digest().subarray(0, 12);
}

export function encodePageToken(secret: Buffer, key: PageKey): string {
  const body = Buffer.from(JSON.stringify([key.t, key.id])).toString('base64url');
  return `${body}.${mac(secret, body).toString('base64url')}`;
}

export function decodePageToken(secret: Buffer, token: string | undefined): PageKey | undefined {
  if (token === undefined || token === '') return undefined;
  const [body, sig] = token.split('.');
  const given = Buffer.from(sig ?? '', 'base64url');
  const want = body ? mac(secret, body) : undefined;
  if (!body || !want || given.length !== want.length || !timingSafeEqual(given, want)) {
    throw new AppError('invalid_request', 'page_token is not a token this list returned', { details: { field: 'query.page_token' } });
  }
  const [t, id] = JSON.parse(Buffer.from(body, 'base64url').toString()) as [string, string];
  return { t, id };
}
