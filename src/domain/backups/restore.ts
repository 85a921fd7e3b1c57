// Restoring a backup into an environment's database, as one operation:
//   1. a pre-restore backup of the target (free; a failed one stops the restore untouched);
//   2. a verification pass over the whole object: sha256 equal to the record's and every segment
//      authenticated, the last one included (truncation), before one byte reaches the target;
//   3. the replay, in ONE transaction: BEGIN, drop every user schema and large object, the dump,
//      and COMMIT written only after the stream's last segment has authenticated again.
//
// Why one transaction rather than a new database and a swap: the environment's URL names a
// database the app's own role owns; Heroku-style roles may not CREATE DATABASE, and a swap needs
// a rename with every connection terminated and the URL, grants and settings carried across.
// PostgreSQL's DDL is transactional, so on any failure (bad segment, SQL error, killed worker,
// psql gone) the server rolls back and the target is exactly as it was. The cost is that the old
// and new data coexist until commit (disk) and the restore holds its locks to the end.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { keyringFromConfig, open } from '../../crypto.ts';
import { AppError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { databaseUrlOf, measure, runCapture } from './capture.ts';
import { backupObjectKey, type BackupDeps } from './deps.ts';
import { BackupIntegrityError, decryptStream } from './format.ts';
import { EnvBusyError, tryLockEnv } from './lock.ts';
import { findTool, libpqInvocation } from './pgtools.ts';
import { backupQueries, type BackupRow, type EnvTarget, type OperationRow } from './queries.ts';

/** Runs first in the restore's transaction: the target is replaced, not merged into. */
export const wipePreamble = `BEGIN;
DO $cairn_restore$
DECLARE s record;
BEGIN
  FOR s IN SELECT nspname FROM pg_namespace
           WHERE nspname NOT IN ('pg_catalog', 'information_schema') AND nspname NOT LIKE 'pg\\_%'
  LOOP
    EXECUTE format('DROP SCHEMA %I CASCADE', s.nspname);
  END LOOP;
  PERFORM lo_unlink(oid) FROM pg_largeobject_metadata;
END
$cairn_restore$;
CREATE SCHEMA public;
`;

type Progress = (phase: string, bytesRead: number, bytesTotal: number) => void;

function dataKeyOf(deps: BackupDeps, backup: BackupRow, metadata: Record<string, string>): Buffer {
  const wrapped = metadata['cairn-wrapped-key'] ?? backup.wrapped_key;
  if (!wrapped) throw new BackupIntegrityError('the object carries no wrapped data key');
  // The data key is sealed with the backup id as associated data: a key copied from another
  // backup's object does not open.
  return open(keyringFromConfig(deps.config), wrapped, `backup-data-key:${backup.id}`);
}

async function openObject(deps: BackupDeps, backup: BackupRow): Promise<{ body: Readable; key: Buffer }> {
  const got = await deps.store.get(backup.bucket, backup.object_key);
  if (!got) throw new AppError('not_found', `the object of ${backup.id} is missing from the backup bucket`);
  return { body: got.body, key: dataKeyOf(deps, backup, got.metadata) };
}

/** Pass 1: the whole object authenticates and matches the record, or nothing happens. */
export async function verifyBackupObject(deps: BackupDeps, backup: BackupRow, progress: Progress = () => undefined): Promise<void> {
  const { body, key } = await openObject(deps, backup);
  const total = Number(backup.size_bytes ?? 0);
  const read = { bytes: 0, hash: createHash('sha256') };
  let last = 0;
  const counted = async function* () {
    for await (const chunk of measure(body, read)) {
      if (read.bytes - last > 4 * 1024 * 1024) {
        last = read.bytes;
        progress('verifying', read.bytes, total);
      }
      yield chunk;
    }
  };
  for await (const plain of decryptStream(counted(), key)) void plain;
  const digest = read.hash.digest('hex');
  if (backup.sha256 && digest !== backup.sha256) {
    throw new BackupIntegrityError(`the object's sha256 ${digest} differs from the recorded ${backup.sha256}`);
  }
  if (total && read.bytes !== total) throw new BackupIntegrityError(`the object is ${read.bytes} bytes, the record says ${total}`);
  progress('verifying', read.bytes, total);
}

/** Pass 2: replays the dump into `url` in one transaction; commits only after the last segment checks. */
export async function applyBackupObject(deps: BackupDeps, backup: BackupRow, url: string, progress: Progress = () => undefined): Promise<void> {
  const psql = await findTool('psql');
  const { dbname, env } = libpqInvocation(url, 'cairn-restore');
  const { body, key } = await openObject(deps, backup);
  const total = Number(backup.size_bytes ?? 0);
  const child = spawn(psql.path, ['-X', '-q', '--no-password', '-v', 'ON_ERROR_STOP=1', `--dbname=${dbname}`], { env, stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString('utf8')).slice(-4000);
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  const read = { bytes: 0 };
  let last = 0;
  async function* feed(): AsyncGenerator<Buffer> {
    try {
      yield Buffer.from(wipePreamble);
      const counted = async function* () {
        for await (const chunk of measure(body, read)) {
          if (read.bytes - last > 4 * 1024 * 1024) {
            last = read.bytes;
            progress('restoring', read.bytes, total);
          }
          yield chunk;
        }
      };
      yield* pipelineToIterable(decryptStream(counted(), key));
    } catch (err) {
      // Kill psql before its stdin closes: it must never see the end of a partial script.
      child.kill('SIGKILL');
      throw err;
    }
    yield Buffer.from('\nCOMMIT;\n');
  }
  try {
    await pipeline(feed, child.stdin);
  } catch (err) {
    const code = await exited;
    if (err instanceof BackupIntegrityError || code === null) throw err;
    throw new Error(`psql failed (exit ${code}): ${stderr.trim() || (err as Error).message}`, { cause: err });
  }
  const code = await exited;
  if (code !== 0) throw new Error(`psql failed (exit ${code}): ${stderr.trim() || 'no message'}`);
  progress('restoring', read.bytes, total);
}

/** gunzip as an async iterable whose errors surface to the consumer. */
async function* pipelineToIterable(plain: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const gunzip = createGunzip({ chunkSize: 128 * 1024 });
  const feeding = pipeline(plain, gunzip);
  // Handled at once (an error also destroys gunzip, which ends the loop below with it).
  feeding.catch(() => undefined);
  for await (const chunk of gunzip) yield chunk as Buffer;
  await feeding;
}

/** Creates the free pre-restore backup row of the target (CONTRACT.md: type manual, trigger pre_restore). */
async function preRestoreRow(deps: BackupDeps, target: EnvTarget): Promise<BackupRow> {
  const now = new Date();
  const settings = await backupQueries(deps.db).settings(target.id);
  const row = await backupQueries(deps.db).insertBackup({
    id: newId('backup'), env_id: target.id, type: 'manual', trigger: 'pre_restore', slot: null,
    bucket: deps.config.CAIRN_BACKUP_BUCKET, object_key: backupObjectKey(target.project_id, target.id, now),
    billable: false, create_time: now, expire_time: new Date(now.getTime() + settings.retention_days.manual * 86_400_000),
  });
  return row!;
}

function errorOf(err: unknown): { code: string; message: string } {
  if (err instanceof BackupIntegrityError) return { code: 'internal', message: `the backup failed verification: ${err.message}; the target was not changed` };
  if (err instanceof AppError) return { code: err.code, message: err.message };
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}

/** The queue handler's entry: idempotent, and one backup or restore per environment at a time. */
export async function runRestore(deps: BackupDeps, operationId: string): Promise<void> {
  const q = backupQueries(deps.db);
  const first = await q.operation(operationId);
  if (!first || first.state === 'succeeded' || first.state === 'failed') return;
  const lock = await tryLockEnv(deps.config.DATABASE_URL, first.env_id);
  if (!lock) throw new EnvBusyError(first.env_id);
  try {
    const op = await q.operation(operationId);
    if (!op || op.state === 'succeeded' || op.state === 'failed') return;
    if (op.state === 'running') {
      await failOperation(deps, op, { code: 'internal', message: 'the worker running this restore stopped before it finished; the target was not changed' });
      return;
    }
    await restoreLocked(deps, op);
  } finally {
    await lock.release();
  }
}

export async function failOperation(deps: BackupDeps, op: OperationRow, error: { code: string; message: string }): Promise<void> {
  await deps.db('backup_operations').where({ id: op.id }).update({ state: 'failed', error: JSON.stringify(error), finish_time: new Date(), update_time: new Date() });
}

async function restoreLocked(deps: BackupDeps, op: OperationRow): Promise<void> {
  const q = backupQueries(deps.db);
  let lastWrite = 0;
  // Progress writes are chained, and drained before the final state, so none lands after it.
  let writes = Promise.resolve();
  const progress: Progress = (phase, bytesRead, bytesTotal) => {
    const now = Date.now();
    if (now - lastWrite < 250 && bytesRead < bytesTotal) return;
    lastWrite = now;
    writes = writes.then(() => q.updateOperation(op.id, { phase, bytes_read: String(bytesRead), bytes_total: String(bytesTotal) })).catch(() => undefined);
  };
  try {
    await q.updateOperation(op.id, { state: 'running', phase: 'pre_restore_backup' });
    const source = op.backup_id ? await q.backup(op.backup_id) : undefined;
    if (!source || source.state !== 'succeeded') throw new AppError('not_found', 'the backup to restore no longer exists');
    const target = await q.envTarget(op.env_id);
    if (!target) throw new AppError('not_found', 'the target environment no longer exists');
    const url = databaseUrlOf(deps, target);

    const pre = await preRestoreRow(deps, target);
    await q.updateOperation(op.id, { pre_backup_id: pre.id });
    const preDone = await runCapture(deps, pre);
    if (preDone.state !== 'succeeded') {
      throw new AppError('conflict', `the pre-restore backup ${pre.id} failed (${preDone.error ?? 'unknown'}); the target was not changed`);
    }

    await q.updateOperation(op.id, { phase: 'verifying', bytes_read: '0', bytes_total: source.size_bytes ?? '0' });
    await verifyBackupObject(deps, source, progress);
    await q.updateOperation(op.id, { phase: 'restoring', bytes_read: '0' });
    await applyBackupObject(deps, source, url, progress);
    await writes;
    await q.updateOperation(op.id, { state: 'succeeded', phase: 'done', bytes_read: source.size_bytes ?? '0', finish_time: new Date() });
    deps.log.info({ operation_id: op.id, backup_id: source.id, env_id: target.id }, 'restore succeeded');
  } catch (err) {
    await writes;
    deps.log.warn({ operation_id: op.id, err }, 'restore failed');
    await failOperation(deps, op, errorOf(err));
  }
}
