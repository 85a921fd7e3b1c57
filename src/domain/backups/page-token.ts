// Opaque page tokens (CONTRACT.md "Lists"): the last backup id seen (ULIDs sort by time), signed
// with a key derived from the service key, so a tampered token is invalid_request.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../../errors.ts';

function sign(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(`cairn backups page:${payload}`).digest('base64url').slice(0, 22);
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
