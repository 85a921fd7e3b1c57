// A backup's stored object, and the data key that opens it. The key is sealed with the service key
// and bound to the backup's id (`dataKeyContext`), so a key copied from another backup's object
// does not open. `cairn backups download` streams the decrypted .sql.gz: each segment is released
// only after its tag checks, and a bad segment aborts the stream, so a download is never silently
// corrupt; `download --sealed` gives the object as it is, for an offline `cairn backups decrypt`.
import { Readable } from 'node:stream';
import { keyringFromConfig, open, type Keyring } from '../../../crypto.ts';
import { AppError } from '../../../app-error.ts';
import type { BackupDeps } from '../deps.ts';
import { decryptStream } from '../format/format.ts';
import type { BackupRow } from '../queries.ts';

/** The associated data a backup's data key is sealed with (capture.ts). */
export const dataKeyContext = (backupId: string): string => `backup-data-key:${backupId}`;

/** The data key's envelope, for an offline `cairn backups decrypt` by the holder of the service key. */
export interface SealedKey {
  format: 'cairn-bk1';
  backup_id: string;
  key_id: string;
  wrapped_key: string;
}

/**
 * The stored object's bytes and its data key's envelope (object metadata, else the row's). The
 * envelope is undefined when neither has it: callers say what that means for them.
 */
export async function storedObject(
  deps: Pick<BackupDeps, 'store'>,
  backup: BackupRow,
): Promise<{ body: Readable; key: SealedKey | undefined }> {
  const got = await deps.store.get(backup.bucket, backup.object_key);
  if (!got) throw new AppError('not_found', `the object of ${backup.id} is missing from the backup bucket`);
  const wrapped = got.metadata['cairn-wrapped-key'] ?? backup.wrapped_key;
  const keyId = got.metadata['cairn-key-id'] ?? backup.key_id;
  return {
    body: got.body,
    key:
      wrapped && keyId ? { format: 'cairn-bk1', backup_id: backup.id, key_id: keyId, wrapped_key: wrapped } : undefined,
  };
}

/** A data key, opened with the service keyring. */
export function openDataKey(keyring: Keyring, key: SealedKey): Buffer {
  return open(keyring, key.wrapped_key, dataKeyContext(key.backup_id));
}

function succeeded(backup: BackupRow): void {
  if (backup.state !== 'succeeded')
    throw new AppError('conflict', `${backup.id} is ${backup.state}; only a succeeded backup can be downloaded`);
}

export async function openDecrypted(
  deps: Pick<BackupDeps, 'config' | 'store'>,
  backup: BackupRow,
): Promise<{ body: Readable; length: number | undefined }> {
  succeeded(backup);
  const { body, key } = await storedObject(deps, backup);
  if (!key) throw new AppError('internal', `${backup.id} carries no wrapped data key`);
  return {
    body: Readable.from(decryptStream(body, openDataKey(keyringFromConfig(deps.config), key))),
    length: backup.gzip_bytes === null ? undefined : Number(backup.gzip_bytes),
  };
}

/**
 * The stored object as it is (cairn-bk1: encrypted and authenticated), and the envelope of its data
 * key, sealed by the service key: only someone holding CAIRN_ENCRYPTION_KEY opens it, offline. For
 * a copy kept outside the service with no plaintext on the way.
 */
export async function openSealed(
  deps: Pick<BackupDeps, 'store'>,
  backup: BackupRow,
): Promise<{ body: Readable; length: number | undefined; key: SealedKey }> {
  succeeded(backup);
  const { body, key } = await storedObject(deps, backup);
  if (!key) throw new AppError('internal', `${backup.id} carries no wrapped data key`);
  return { body, length: backup.size_bytes === null ? undefined : Number(backup.size_bytes), key };
}
