// Restoring a backup into an environment's database, as one operation:
//   1. a pre-restore backup of the target (free; a failed one stops the restore untouched);
//   2. verification, overlapped with the object's one download into a temporary file on the
//      worker: sha256 equal to the record's and every segment authenticated, the last one
//      included (truncation), before one byte reaches the target;
//   3. the replay from that file, in ONE transaction: BEGIN, drop every user schema and large
//      object, the dump, and COMMIT written only after the stream's last segment has
//      authenticated again and the script proved whole: as many bytes as pg_dump wrote, the
//      same sha256, and pg_dump's closing line (pipes.ts, dump-check.ts). pg_dump's plain format puts its own BEGIN/COMMIT around the large
//      objects (the BLOBS entry); that COMMIT would end our transaction halfway, so the gunzip
//      child turns exactly that pair into comments on the way to psql (blobs-filter.ts: it
//      follows COPY blocks, so row data is never touched, and the SQL still never passes
//      through this process). Without it, a failure after the large objects (an index, a
//      constraint, a bad last segment) left the target half restored.
//      The wipe makes `public` again as a new database has it (wipe.ts), and statements naming
//      roles the target lacks or this role may not act as are left out and counted for the
//      operation's `response.skipped` (role-filter.ts), in the same child.
//
// Why a temporary file rather than downloading twice (verify, then stream again): one transfer
// instead of two (the verification costs no extra download), and the bytes replayed are the very
// bytes verified; a second GET could return another object written in between. The file holds
// ciphertext only (cairn-bk1), is private to the worker (0600 in a 0700 folder) and is removed
// when the restore ends; it needs free space on the worker's temporary disk equal to the
// object's size, which is the compressed dump's. Streaming straight into the target while
// verifying would be faster still, but then unverified data would reach it before the last
// segment checked (the transaction would roll it back, yet the issue asks for verification first).
//
// Why one transaction rather than a new database and a swap: the environment's URL names a
// database the app's own role owns; Heroku-style roles may not CREATE DATABASE, and a swap needs
// a rename with every connection terminated and the URL, grants and settings carried across.
// PostgreSQL's DDL is transactional, so on any failure (bad segment, SQL error, killed worker,
// psql gone) the server rolls back and the target is exactly as it was. The cost is that the old
// and new data coexist until commit (disk) and the restore holds its locks to the end.
import { createHash, type Hash } from 'node:crypto';
import pg from 'pg';
import { closeSync, createReadStream, openSync, writeSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { keyringFromConfig } from '../../crypto.ts';
import { AppError } from '../../app-error.ts';
import { newId } from '../../ids.ts';
import { databaseUrlOf, runCapture } from './capture.ts';
import { backupObjectKey, type BackupDeps } from './deps.ts';
import { BackupIntegrityError, decryptStream } from './format.ts';
import { EnvBusyError, tryLockEnv } from './lock.ts';
import { streamingCollector } from './memory.ts';
import { findTool } from './pgtools.ts';
import { IncompleteDumpError, startReplay, type SqlFigures } from './pipes.ts';
import { backupQueries, type BackupRow, type EnvTarget, type OperationRow } from './queries.ts';
import { openDataKey, storedObject } from './download.ts';
import { settleOperation } from './settle.ts';
import { wipePreamble } from './wipe.ts';
import { rolesOf } from './catalog.ts';
import type { Skipped } from './role-filter.ts';

type Progress = (phase: string, bytesRead: number, bytesTotal: number) => void;

async function openObject(deps: BackupDeps, backup: BackupRow): Promise<{ body: Readable; key: Buffer }> {
  const { body, key } = await storedObject(deps, backup);
  if (!key) throw new BackupIntegrityError('the object carries no wrapped data key');
  return { body, key: openDataKey(keyringFromConfig(deps.config), key) };
}

/** Counts bytes as they pass and reports them every 4 MiB. */
async function* counted(
  source: AsyncIterable<Buffer>,
  phase: string,
  total: number,
  progress: Progress,
  hash?: Hash,
): AsyncGenerator<Buffer> {
  let bytes = 0;
  let last = 0;
  // Every 4 MiB: downloads arrive fast enough that at 8 MiB some chunks outlive two minor GCs
  // and are promoted, then wait for a major one (measured: peak external memory 42 MB vs 25).
  const collect = streamingCollector(4 * 1024 * 1024);
  for await (const chunk of source) {
    bytes += chunk.length;
    collect(chunk.length);
    hash?.update(chunk);
    if (bytes - last > 4 * 1024 * 1024) {
      last = bytes;
      progress(phase, bytes, total);
    }
    yield chunk;
  }
  progress(phase, bytes, total);
}

/**
 * Pass 1, overlapped with the one download: every chunk is hashed, written to `path` and fed to
 * the segment authenticator as it arrives. Resolves with the data key once the sha256 and length
 * equal the record's and every segment, the last one included (truncation), authenticated.
 */
export async function fetchVerified(
  deps: BackupDeps,
  backup: BackupRow,
  path: string,
  progress: Progress = () => undefined,
): Promise<Buffer> {
  const { body, key } = await openObject(deps, backup);
  const total = Number(backup.size_bytes ?? 0);
  const hash = createHash('sha256');
  // Written synchronously, chunk by chunk: a page-cache write of one chunk takes microseconds,
  // nothing is buffered and the download never waits on a write callback. Measured on a 153 MiB
  // object: a write stream took 0.55–0.85 s with its 16 KiB buffer, and with a 4 MiB one kept
  // chunks alive long enough to add ~20 MB of RSS; this takes 0.37–0.52 s (a bare GET, 0.25 s).
  const fd = openSync(path, 'wx', 0o600);
  let bytes = 0;
  async function* saved(): AsyncGenerator<Buffer> {
    for await (const chunk of counted(body, 'verifying', total, progress, hash)) {
      bytes += chunk.length;
      writeSync(fd, chunk);
      yield chunk;
    }
  }
  try {
    for await (const plain of decryptStream(saved(), key)) void plain;
  } catch (err) {
    body.destroy();
    throw err;
  } finally {
    closeSync(fd);
  }
  const digest = hash.digest('hex');
  if (backup.sha256 && digest !== backup.sha256) {
    throw new BackupIntegrityError(`the object's sha256 ${digest} differs from the recorded ${backup.sha256}`);
  }
  if (total && bytes !== total)
    throw new BackupIntegrityError(`the object is ${bytes} bytes, the record says ${total}`);
  return key;
}

/** Verification alone (pass 1 into a temporary file that is then removed). */
export async function verifyBackupObject(
  deps: BackupDeps,
  backup: BackupRow,
  progress: Progress = () => undefined,
): Promise<void> {
  await withTempDir(async (dir) => {
    await fetchVerified(deps, backup, join(dir, 'object'), progress);
  });
}

const tempPrefix = 'cairn-restore-';

async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  await sweepTempDirs();
  // mkdtemp makes the folder 0700; the file inside holds ciphertext only, and is removed at once.
  // The worker's pid in the name lets a later restore on this machine remove what a killed one left.
  const dir = await mkdtemp(join(tmpdir(), `${tempPrefix}${process.pid}-`));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** Removes the temporary folders of restores whose worker process is gone (killed mid-restore). */
export async function sweepTempDirs(): Promise<string[]> {
  const removed: string[] = [];
  const names = await readdir(tmpdir()).catch(() => [] as string[]);
  for (const name of names) {
    const m = new RegExp(`^${tempPrefix}(\\d+)-`).exec(name);
    if (!m || alive(Number(m[1]))) continue;
    await rm(join(tmpdir(), name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

/**
 * Pass 2: replays a cairn-bk1 stream into `url` in one transaction. The decrypted dump (gzip)
 * goes to the gunzip child, which writes BEGIN and the wipe first and COMMIT last, and COMMIT
 * only once the whole script has passed and matches what pg_dump wrote (byte count and sha256
 * from the backup's record, the closing line; pipes.ts). If anything stops it first (a bad
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

/** Creates the free pre-restore backup row of the target (docs/api.md: type manual, trigger pre_restore). */
async function preRestoreRow(deps: BackupDeps, target: EnvTarget): Promise<BackupRow> {
  const now = new Date();
  const settings = await backupQueries(deps.db).settings(target.id);
  const row = await backupQueries(deps.db).insertBackup({
    id: newId('backup'),
    env_id: target.id,
    type: 'manual',
    trigger: 'pre_restore',
    slot: null,
    bucket: deps.config.CAIRN_BACKUP_BUCKET,
    object_key: backupObjectKey(target.project_id, target.id, now),
    billable: false,
    create_time: now,
    expire_time: new Date(now.getTime() + settings.retention_days.manual * 86_400_000),
  });
  return row!;
}

function errorOf(err: unknown): { code: string; message: string } {
  if (err instanceof BackupIntegrityError || err instanceof IncompleteDumpError) {
    return { code: 'internal', message: `the backup failed verification: ${err.message}; the target was not changed` };
  }
  if (err instanceof AppError) return { code: err.code, message: err.message };
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}

/** The queue handler's entry: idempotent, and one backup or restore per environment at a time. */
export async function runRestore(deps: BackupDeps, operationId: string): Promise<void> {
  const q = backupQueries(deps.db);
  const first = await q.operation(operationId);
  if (!first || first.state === 'succeeded' || first.state === 'failed') return;
  const lock = await tryLockEnv(deps.db, first.env_id);
  if (!lock) throw new EnvBusyError(first.env_id);
  try {
    const op = await q.operation(operationId);
    if (!op || op.state === 'succeeded' || op.state === 'failed') return;
    if (op.state === 'running') {
      // Its worker died (we hold the lock it held): the outcome is read back, not guessed.
      if ((await reconcileRestore(deps, op)) === 'undecided') throw new RestoreUndecidedError(op.id);
      return;
    }
    await restoreLocked(deps, op);
  } finally {
    await lock.release();
  }
}

/** Thrown (so pg-boss retries the job later) while a dead worker's restore transaction is still open. */
export class RestoreUndecidedError extends Error {
  constructor(id: string) {
    super(`the transaction of restore ${id} is still open in its target; its outcome is read again later`);
    this.name = 'RestoreUndecidedError';
  }
}

async function transactionStatus(url: string, xid: string): Promise<string | null> {
  const client = new pg.Client({
    connectionString: url,
    application_name: 'cairn-restore-check',
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    // txid_status (PostgreSQL 10+): committed, aborted, in progress; null once too old to tell.
    return (await client.query<{ s: string | null }>('select txid_status($1::bigint) as s', [xid])).rows[0]!.s;
  } finally {
    await client.end();
  }
}

/**
 * Settles a restore whose worker died, from what its target says. Without a recorded transaction
 * id the worker never let COMMIT through, so nothing was committed (its psql, left behind, reads
 * a script without COMMIT and the server rolls it back). With one, txid_status tells: committed →
 * succeeded; aborted → failed, the target unchanged; still open → undecided, read again later.
 */
export async function reconcileRestore(
  deps: BackupDeps,
  op: OperationRow,
): Promise<'succeeded' | 'failed' | 'undecided'> {
  const stopped = 'the worker running this restore stopped before it finished';
  if (!op.restore_xid) {
    // Unless its worker recorded the id meanwhile (a worker taken for gone while alive, after a
    // database restart): then its outcome is read from the target.
    const message = `${stopped}; the target was not changed`;
    if (await failOperation(deps, op, { code: 'internal', message }, { unlessXid: true })) return 'failed';
    const now = (await backupQueries(deps.db).operation(op.id))!;
    if (now.state === 'succeeded' || now.state === 'failed') return now.state;
    return reconcileRestore(deps, now);
  }
  const target = await backupQueries(deps.db).envTarget(op.env_id);
  if (!target) {
    await failOperation(deps, op, {
      code: 'not_found',
      message: `${stopped}, and the target environment no longer exists`,
    });
    return 'failed';
  }
  const status = await transactionStatus(databaseUrlOf(deps, target), op.restore_xid).catch(() => 'unreachable');
  if (status === 'committed') {
    await settleOperation(deps, op.id, {
      state: 'succeeded',
      phase: 'done',
      bytes_read: op.bytes_total,
      finish_time: new Date(),
    });
    deps.log.info({ operation_id: op.id }, 'restore reconciled: its transaction committed before its worker stopped');
    return 'succeeded';
  }
  if (status === 'aborted') {
    await failOperation(deps, op, {
      code: 'internal',
      message: `${stopped}; its transaction rolled back, the target was not changed`,
    });
    return 'failed';
  }
  if (status === null) {
    await failOperation(deps, op, {
      code: 'internal',
      message: `${stopped}, and its transaction ${op.restore_xid} is too old for the target to say whether it committed: check the target's data`,
    });
    return 'failed';
  }
  return 'undecided';
}

export async function failOperation(
  deps: BackupDeps,
  op: OperationRow,
  error: { code: string; message: string },
  options: { unlessXid?: boolean } = {},
): Promise<boolean> {
  return settleOperation(
    deps,
    op.id,
    { state: 'failed', error: JSON.stringify(error), finish_time: new Date() },
    options,
  );
}

async function restoreLocked(deps: BackupDeps, op: OperationRow): Promise<void> {
  const q = backupQueries(deps.db);
  let lastWrite = 0;
  // Progress writes are chained, and drained before the final state, so none lands after it.
  let writes = Promise.resolve();
  let lastPhase = '';
  const progress: Progress = (phase, bytesRead, bytesTotal) => {
    const now = Date.now();
    if (now - lastWrite < 250 && bytesRead < bytesTotal && phase === lastPhase) return;
    lastWrite = now;
    lastPhase = phase;
    writes = writes
      .then(() => q.updateOperation(op.id, { phase, bytes_read: String(bytesRead), bytes_total: String(bytesTotal) }))
      .catch(() => undefined);
  };
  try {
    await q.updateOperation(op.id, { state: 'running', phase: 'pre_restore_backup' });
    const source = op.backup_id ? await q.backup(op.backup_id) : undefined;
    if (!source || source.state !== 'succeeded')
      throw new AppError('not_found', 'the backup to restore no longer exists');
    const target = await q.envTarget(op.env_id);
    if (!target) throw new AppError('not_found', 'the target environment no longer exists');
    const url = databaseUrlOf(deps, target);

    const pre = await preRestoreRow(deps, target);
    await q.updateOperation(op.id, { pre_backup_id: pre.id });
    const preDone = await runCapture(deps, pre);
    if (preDone.state !== 'succeeded') {
      throw new AppError(
        'conflict',
        `the pre-restore backup ${pre.id} failed (${preDone.error ?? 'unknown'}); the target was not changed`,
      );
    }

    progress('verifying', 0, Number(source.size_bytes ?? 0));
    const skipped = await restoreObject(deps, source, url, progress, async (xid) => {
      await writes;
      if (!(await q.recordRestoreXid(op.id, xid))) throw new RestoreSettledError(op.id);
    });
    await writes;
    await settleOperation(deps, op.id, {
      state: 'succeeded',
      phase: 'done',
      bytes_read: source.size_bytes ?? '0',
      finish_time: new Date(),
      skipped,
    });
    deps.log.info({ operation_id: op.id, backup_id: source.id, env_id: target.id, skipped }, 'restore succeeded');
  } catch (err) {
    await writes;
    // Settled by another worker already (this one was taken for gone): its word stands.
    if (err instanceof RestoreSettledError) {
      deps.log.warn({ operation_id: op.id }, err.message);
      return;
    }
    deps.log.warn({ operation_id: op.id, err }, 'restore failed');
    await failOperation(deps, op, errorOf(err));
  }
}

/** Its operation was settled by another worker before its COMMIT: it is rolled back instead. */
class RestoreSettledError extends Error {
  constructor(id: string) {
    super(`restore ${id} was settled by another worker while this one ran; its transaction was rolled back`);
    this.name = 'RestoreSettledError';
  }
}
