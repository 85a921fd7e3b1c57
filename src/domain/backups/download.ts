// `cairn backups download`: the decrypted .sql.gz, streamed. Each segment is released only after
// its tag checks; a bad segment aborts the stream, so a download is never silently corrupt.
import { Readable } from 'node:stream';
import { keyringFromConfig, open } from '../../crypto.ts';
import { AppError } from '../../errors.ts';
import type { BackupDeps } from './deps.ts';
import { decryptStream } from './format.ts';
import type { BackupRow } from './queries.ts';

export async function openDecrypted(
  deps: Pick<BackupDeps, 'config' | 'store'>,
  backup: BackupRow,
): Promise<{ body: Readable; length: number | undefined }> {
  if (backup.state !== 'succeeded')
    throw new AppError('conflict', `${backup.id} is ${backup.state}; only a succeeded backup can be downloaded`);
  const got = await deps.store.get(backup.bucket, backup.object_key);
  if (!got) throw new AppError('not_found', `the object of ${backup.id} is missing from the backup bucket`);
  const wrapped = got.metadata['cairn-wrapped-key'] ?? backup.wrapped_key;
  if (!wrapped) throw new AppError('internal', `${backup.id} carries no wrapped data key`);
  const key = open(keyringFromConfig(deps.config), wrapped, `backup-data-key:${backup.id}`);
  return {
    body: Readable.from(decryptStream(got.body, key)),
    length: backup.gzip_bytes === null ? undefined : Number(backup.gzip_bytes),
  };
}

/** The data key's envelope, for an offline `cairn backups decrypt` by the holder of the service key. */
export interface SealedKey {
  format: 'cairn-bk1';
  backup_id: string;
  key_id: string;
  wrapped_key: string;
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
  if (backup.state !== 'succeeded')
    throw new AppError('conflict', `${backup.id} is ${backup.state}; only a succeeded backup can be downloaded`);
  const got = await deps.store.get(backup.bucket, backup.object_key);
  if (!got) throw new AppError('not_found', `the object of ${backup.id} is missing from the backup bucket`);
  const wrapped = got.metadata['cairn-wrapped-key'] ?? backup.wrapped_key;
  const keyId = got.metadata['cairn-key-id'] ?? backup.key_id;
  if (!wrapped || !keyId) throw new AppError('internal', `${backup.id} carries no wrapped data key`);
  return {
    body: Readable.from(got.body),
    length: backup.size_bytes === null ? undefined : Number(backup.size_bytes),
    key: { format: 'cairn-bk1', backup_id: backup.id, key_id: keyId, wrapped_key: wrapped },
  };
}

/** The data key of a sealed download, opened with the service keyring (the backup id is bound in). */
export function openSealedKey(keyring: Parameters<typeof open>[0], key: SealedKey): Buffer {
  return open(keyring, key.wrapped_key, `backup-data-key:${key.backup_id}`);
}
