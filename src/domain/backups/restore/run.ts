// Restoring a backup into an environment's database, as one operation:
//   1. a pre-restore backup of the target (free; a failed one stops the restore untouched);
//   2. verification, overlapped with the object's one download into a temporary file on the
//      worker: sha256 equal to the record's and every segment authenticated, the last one
//      included (truncation), before one byte reaches the target;
//   3. the replay from that file, in ONE transaction: BEGIN, drop every user schema and large
//      object, the dump, and COMMIT written only after the stream's last segment has
//      authenticated again and the script proved whole: as many bytes as pg_dump wrote, the
//      same sha256, and pg_dump's closing line (replay-stages.ts, dump-check.ts). pg_dump's plain format puts its own BEGIN/COMMIT around the large
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
import { AppError } from '../../../app-error.ts';
import { newId } from '../../../ids.ts';
import { runCapture } from '../capture/capture.ts';
import { databaseUrlOf } from '../target-db.ts';
import { backupObjectKey, type BackupDeps } from '../deps.ts';
import { BackupIntegrityError } from '../format/format.ts';
import { EnvBusyError, tryLockEnv } from '../lock.ts';
import { backupQueries, type BackupRow, type EnvTarget, type OperationRow } from '../queries.ts';
import { settleOperation } from '../settle.ts';
import { restoreObject } from './apply.ts';
import type { Progress } from './fetch.ts';
import { failOperation, reconcileRestore } from './reconcile.ts';
import { IncompleteDumpError } from './replay.ts';

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
