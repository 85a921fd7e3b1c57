// Backup lists page by the last backup id seen (ULIDs sort by time), in signed tokens
// (src/pagination.ts).
import { isString, readPageToken, signPageToken } from '../../pagination.ts';

export const encodePageToken = (key: Buffer, lastId: string): string => signPageToken(key, 'backups', lastId);

export const decodePageToken = (key: Buffer, token: string | undefined): string | undefined =>
  readPageToken(key, 'backups', token, isString);
