// Expiring download links (Heroku's `pg:backups:url`): a URL anyone holding it can fetch for a
// while, without a key, to hand a backup to another tool (curl, a CI job, a restore elsewhere). The
// link is the backup's id, an expiry and the id of the API key that asked for it, signed with
// HMAC-SHA-256 under a key derived from the service key for this one use (crypto.ts derivedKey), so it
// cannot be stretched or moved to another backup, and it is checked before anything touches the
// database. It works only while that API key is unrevoked and may still read backups, so revoking
// a leaked key ends its links too. It gives the decrypted .sql.gz, like the authenticated download;
// a rotated service key ends every link made under the old one.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Config } from '../../../config.ts';
import { derivedKey, keyringFromConfig } from '../../../crypto.ts';

export const defaultLinkSeconds = 3600;
export const maxLinkSeconds = 24 * 3600;

type KeyConfig = Pick<Config, 'encryptionKeys' | 'CAIRN_ENCRYPTION_KEY_ID'>;

const linkKey = (config: KeyConfig): Buffer => derivedKey(keyringFromConfig(config), 'cairn backup download links');

const mac = (config: KeyConfig, backupId: string, expires: number, keyId: string): Buffer =>
  createHmac('sha256', linkKey(config)).update(`${backupId}\n${expires}\n${keyId}`).digest();

export interface LinkQuery {
  expires: number;
  key: string;
  signature: string;
}

/** The query of a link to `backupId`, asked for by API key `keyId`, that works until `expires` (unix seconds). */
export function signDownload(config: KeyConfig, backupId: string, expires: number, keyId: string): LinkQuery {
  return { expires, key: keyId, signature: mac(config, backupId, expires, keyId).toString('base64url') };
}

/** Whether a link's query is ours, for this backup, and not expired (nor further off than links are made for). */
export function linkValid(
  config: KeyConfig,
  backupId: string,
  link: LinkQuery,
  now: number = Date.now() / 1000,
): boolean {
  const { expires, key, signature } = link;
  if (!Number.isInteger(expires) || expires < now || expires > now + maxLinkSeconds + 60) return false;
  const given = Buffer.from(signature, 'base64url');
  const want = mac(config, backupId, expires, key);
  return given.length === want.length && timingSafeEqual(given, want);
}
