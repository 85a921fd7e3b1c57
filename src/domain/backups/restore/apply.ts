// Pass 2 of a restore (run.ts): the verified object replayed into the target in one transaction.
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { BackupDeps } from '../deps.ts';
import { BackupIntegrityError, decryptStream } from '../format/format.ts';
import { findTool } from '../pgtools.ts';
import type { SqlFigures } from '../zlib-child.ts';
import type { BackupRow } from '../queries.ts';
import { counted, fetchVerified, openObject, withTempDir, type Progress } from './fetch.ts';
import { startReplay } from './replay.ts';
import type { Skipped } from './role-filter.ts';
import { rolesOf } from './target.ts';
import { wipePreamble } from './wipe.ts';

/**
 * Pass 2: replays a cairn-bk1 stream into `url` in one transaction. The decrypted dump (gzip)
 * goes to the gunzip child, which writes BEGIN and the wipe first and COMMIT last, and COMMIT
 * only once the whole script has passed and matches what pg_dump wrote (byte count and sha256
 * from the backup's record, the closing line; replay-stages.ts). If anything stops it first (a bad
 * segment, an error, a short script, this process killed), psql reads the end of a script whose
 * transaction is still open and the server rolls it back.
 */
export async function replayStream(
  source: AsyncIterable<Buffer>,
  key: Buffer,
  url: string,
  expected: SqlFigures | null,
  beforeCommit: (xid: string) => Promise<void> = async () => undefined,
): Promise<Skipped> {
  const psql = await findTool('psql');
  const roles = await rolesOf(url);
  const r = startReplay(psql.path, url, { preamble: wipePreamble, expected, roles });
  async function* feed(): AsyncGenerator<Buffer> {
    try {
      yield* decryptStream(source, key);
    } catch (err) {
      // psql dies first, so it never reads the end of a partial script.
      r.kill();
      throw err;
    }
  }
  try {
    await pipeline(feed, r.input);
  } catch (err) {
    // An SQL error that stopped psql explains the broken pipe.
    r.kill();
    if (err instanceof BackupIntegrityError) throw err;
    throw (await r.ownFailure()) ?? err;
  }
  // The whole script has passed: the decompressor's checks decide, then the worker's word.
  const ready = await r.ready;
  const xid = ready && !ready.refused ? await r.xid : undefined;
  if (xid === undefined) {
    r.kill();
    await r.finished;
    throw new Error('the restore stopped before its transaction could commit');
  }
  try {
    await beforeCommit(xid);
  } catch (err) {
    r.kill();
    throw err;
  }
  r.confirm();
  await r.finished;
  const skipped = ready!.skipped ?? { statements: 0, roles: [] };
  const refused = r.refusedOwners();
  return {
    statements: skipped.statements + refused.length,
    roles: [...new Set([...skipped.roles, ...refused])].sort(),
  };
}

/** What pg_dump wrote, as recorded when the backup was taken (null for backups older than that record). */
export function recordedSql(backup: BackupRow): SqlFigures | null {
  return backup.sql_bytes !== null && backup.sql_sha256 !== null
    ? { bytes: Number(backup.sql_bytes), sha256: backup.sql_sha256 }
    : null;
}

/**
 * Verify, then replay (see the top of this file): the object is downloaded once, into a
 * temporary file, and verified on the way in; the replay reads that file, so exactly the bytes
 * that were verified reach the target (a second download could differ from the first).
 */
export async function restoreObject(
  deps: BackupDeps,
  backup: BackupRow,
  url: string,
  progress: Progress = () => undefined,
  beforeCommit?: (xid: string) => Promise<void>,
): Promise<Skipped> {
  const total = Number(backup.size_bytes ?? 0);
  return withTempDir(async (dir) => {
    const path = join(dir, 'object');
    const key = await fetchVerified(deps, backup, path, progress);
    progress('restoring', 0, total);
    return replayStream(
      counted(createReadStream(path), 'restoring', total, progress),
      key,
      url,
      recordedSql(backup),
      beforeCommit,
    );
  });
}

/**
 * Replays straight from the bucket with no verification pass: for tests and tools only, to show
 * that even then the transaction never commits a bad stream.
 */
export async function applyBackupObject(deps: BackupDeps, backup: BackupRow, url: string): Promise<void> {
  const { body, key } = await openObject(deps, backup);
  try {
    await replayStream(body, key, url, recordedSql(backup));
  } finally {
    body.destroy();
  }
}
