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
