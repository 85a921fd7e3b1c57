// Taking a backup: pg_dump (plain SQL) → gzip -6 (its own process, see zlib-child.ts) → cairn-bk1
// encryption → multipart upload, streamed end to end so memory stays at a few parts whatever the
// database's size; the object's sha256 is computed on the way out, in the same pass. The upload is
// completed only after pg_dump and gzip exit 0, and the backup is `succeeded` only after the stored
// object was read back and proved whole (verify.ts). On any failure the unfinished upload and any
// object are removed and the row says `failed` with the reason, so the bucket never holds a backup
// the table does not vouch for.
import { createHash, randomBytes } from 'node:crypto';
import { keyringFromConfig, seal } from '../../../crypto.ts';
import { openCatalogSnapshot, type CatalogSnapshot } from './catalog.ts';
import { catalogStore } from './catalog-queries.ts';
import { serverFigures } from './queries.ts';
import { databaseUrlOf, onTarget } from '../target-db.ts';
import { AppError } from '../../../app-error.ts';
import { BackupIntegrityError, encryptStream, formatName } from '../format/format.ts';
import { tryLockEnv } from '../lock.ts';
import { streamingCollector } from '../memory.ts';
import { checkDumpVersion, findTool, parseServerVersionNum, type PgVersion } from '../pgtools.ts';
import { startDump, type DumpProcess } from './dump.ts';
import { type SqlFigures } from '../zlib-child.ts';
import { backupQueries, type BackupRow } from '../queries.ts';
import { retentionFor, type BackupDeps } from '../deps.ts';
import { dataKeyContext } from '../downloads/download.ts';
import { settleBackup } from '../settle.ts';
import { EnvBusyError } from '../lock.ts';
import { measure, verifyStored } from './verify.ts';

export async function serverVersion(url: string): Promise<PgVersion & { databaseBytes: number }> {
  const { versionNum, databaseBytes } = await onTarget(url, 'cairn-backup', serverFigures);
  return { ...parseServerVersionNum(versionNum), databaseBytes };
}

/**
 * Multipart part size: 8 MiB, larger only when the dump could otherwise need more than S3's
 * 10,000 parts. The gzip'd dump is taken to be at most twice the database's size on disk (it is
 * usually a small fraction), so parts grow past 8 MiB only above about 40 GiB of database;
 * memory is about three parts.
 */
export function partSizeFor(databaseBytes: number): number {
  const mib = 1024 * 1024;
  return Math.max(8 * mib, Math.ceil((2 * databaseBytes) / 10_000 / mib) * mib);
}

/** A backup cut off by a killed or stopped worker runs again, same id, up to this many times. */
export const maxInterruptions = 3;

/** Thrown by the job when its backup was handed back (the worker is stopping): pg-boss runs it again later. */
export class BackupInterruptedError extends Error {
  constructor(id: string) {
    super(`backup ${id} was interrupted by the worker stopping; it runs again`);
    this.name = 'BackupInterruptedError';
  }
}

/**
 * The queue handler's entry: idempotent for pg-boss's at-least-once delivery. A backup found
 * `running` while we hold its environment's lock was cut off (its worker died): what it left in
 * the bucket is removed and it runs again, up to `maxInterruptions` times.
 */
export async function captureBackup(deps: BackupDeps, backupId: string): Promise<void> {
  const q = backupQueries(deps.db);
  const first = await q.backup(backupId);
  if (!first || first.state === 'succeeded' || first.state === 'failed') return;
  const lock = await tryLockEnv(deps.db, first.env_id);
  if (!lock) throw new EnvBusyError(first.env_id);
  let done: BackupRow | undefined;
  try {
    let backup = await q.backup(backupId);
    if (!backup || backup.state === 'succeeded' || backup.state === 'failed') return;
    if (backup.state === 'running') {
      backup = await interruptBackup(deps, backup, 'the worker running this backup stopped before it finished');
      if (backup.state === 'failed') return;
    }
    done = await runCapture(deps, backup, 'retry');
  } finally {
    await lock.release();
  }
  if (done.state === 'pending') throw new BackupInterruptedError(backupId);
}

/**
 * A run cut off: its multipart upload is aborted and any object removed at once, then the backup
 * goes back to `pending` to run again, or ends `failed` once it was cut off `maxInterruptions`
 * times (a restore's pre-restore copy ends `failed` at once). Answers the row as it now is.
 */
export async function interruptBackup(deps: BackupDeps, backup: BackupRow, why: string): Promise<BackupRow> {
  const interruptions = backup.interruptions + 1;
  // A pre-restore copy has no job of its own: it belongs to its restore, which is settled apart.
  if (backup.trigger === 'pre_restore') {
    await failBackup(deps, backup, why);
    return { ...backup, state: 'failed' };
  }
  if (interruptions > maxInterruptions) {
    await failBackup(deps, backup, `${why}, ${interruptions} times; not tried again`);
    return { ...backup, state: 'failed' };
  }
  await deps.store.abortIncompleteUploads(backup.bucket, backup.object_key);
  await deps.store.delete(backup.bucket, backup.object_key);
  const patch = { state: 'pending' as const, interruptions, start_time: null, error: null };
  await backupQueries(deps.db).updateBackup(backup.id, patch);
  deps.log.warn({ backup_id: backup.id, interruptions }, `${why}; it runs again`);
  return { ...backup, ...patch };
}

/**
 * A run whose backup was interrupted by another worker while it ran (this worker was taken for
 * gone, its sessions cut by a database restart): it leaves the row and the bucket to the run that
 * took over. Answers the row as it now is.
 */
async function handedOver(deps: BackupDeps, backup: BackupRow): Promise<BackupRow> {
  deps.log.warn({ backup_id: backup.id }, 'this backup was handed to another run while this one ran; left to it');
  return (await backupQueries(deps.db).backup(backup.id)) ?? backup;
}

/** Marks a backup failed after removing anything it may have left in the bucket. */
export async function failBackup(deps: BackupDeps, backup: BackupRow, message: string): Promise<void> {
  await deps.store
    .abortIncompleteUploads(backup.bucket, backup.object_key)
    .catch((err: unknown) => deps.log.warn({ err, backup_id: backup.id }, 'abort uploads failed'));
  await deps.store
    .delete(backup.bucket, backup.object_key)
    .catch((err: unknown) => deps.log.warn({ err, backup_id: backup.id }, 'delete object failed'));
  await settleBackup(deps, backup.id, {
    state: 'failed',
    error: message.slice(0, 2000),
    finish_time: new Date(),
  });
}

type Queries = ReturnType<typeof backupQueries>;

/** The source's URL, server and pg_dump, checked against each other; the bucket made sure of. */
async function prepare(deps: BackupDeps, q: Queries, backup: BackupRow) {
  const env = await q.envTarget(backup.env_id);
  if (!env) throw new AppError('not_found', 'the environment no longer exists');
  const url = databaseUrlOf(deps, env);
  const [server, tool] = await Promise.all([
    serverVersion(url),
    findTool('pg_dump'),
    deps.store.ensureBucket(backup.bucket),
  ]);
  checkDumpVersion(tool.version, server);
  await q.updateBackup(backup.id, { pg_version: server.text, pg_dump_version: tool.version.text });
  return { url, server, tool };
}

/**
 * The bytes so far, for `cairn backups create`'s progress: written about once a second, off the
 * stream's path (a write still in flight is not waited for, nor repeated).
 */
function progressWriter(q: Queries, backupId: string) {
  let shown = performance.now();
  let showing: Promise<void> | undefined;
  return {
    show(bytes: number) {
      if (showing || performance.now() - shown < 1000) return;
      shown = performance.now();
      showing = q
        .updateBackup(backupId, { progress_bytes: String(bytes) })
        .catch(() => undefined)
        .finally(() => (showing = undefined));
    },
    settled: () => showing,
  };
}

/** The dump, encrypted and uploaded; the stream fails unless pg_dump and gzip exit 0, so the upload cannot complete before that. */
async function upload(
  deps: BackupDeps,
  backup: BackupRow,
  d: DumpProcess,
  key: { dataKey: Buffer; keyId: string; wrapped: string },
  partSize: number,
  progress: ReturnType<typeof progressWriter>,
) {
  const gzipped = { bytes: 0 };
  const stored = { bytes: 0, hash: createHash('sha256') };
  const collect = streamingCollector();
  let sql: SqlFigures | undefined;
  async function* compressed(): AsyncGenerator<Buffer> {
    for await (const chunk of d.output as AsyncIterable<Buffer>) {
      gzipped.bytes += chunk.length;
      collect(chunk.length);
      progress.show(stored.bytes);
      yield chunk;
    }
    sql = await d.finished;
  }
  const uploaded = await deps.store.putStream(
    backup.bucket,
    backup.object_key,
    measure(encryptStream(compressed(), key.dataKey), stored),
    {
      partSize,
      contentType: 'application/octet-stream',
      metadata: {
        'cairn-format': formatName,
        'cairn-key-id': key.keyId,
        'cairn-wrapped-key': key.wrapped,
        'cairn-backup-id': backup.id,
      },
    },
  );
  await progress.settled();
  return { size: uploaded.size, gzipBytes: gzipped.bytes, sha256: stored.hash.digest('hex'), sql: sql! };
}

/** What a run that failed leaves: the row handed over, handed back to run again, or failed. */
async function captureFailed(
  deps: BackupDeps,
  q: Queries,
  backup: BackupRow,
  err: unknown,
  onStop: 'retry' | 'fail',
): Promise<BackupRow> {
  const again = (await q.backup(backup.id)) ?? backup;
  // Handed to another run meanwhile: what is in the bucket is that run's now.
  if (again.interruptions !== backup.interruptions) return handedOver(deps, again);
  if (deps.stopping?.aborted && onStop === 'retry')
    return interruptBackup(deps, again, 'the worker was stopped while this backup ran');
  const message =
    err instanceof BackupIntegrityError
      ? `verification failed: ${err.message}`
      : err instanceof Error
        ? err.message
        : String(err);
  deps.log.warn({ backup_id: backup.id, err }, 'backup failed');
  await failBackup(deps, again, message);
  return { ...again, state: 'failed', error: message };
}

/**
 * Runs one backup with the environment's lock already held (by captureBackup, or by a restore
 * taking its pre-restore copy). Never throws for a failed backup: the answer row says how it
 * ended. When the worker is told to stop mid-run, `onStop` decides: `retry` hands the backup back
 * (`pending`, its upload aborted) for its job to run again; `fail` ends it failed.
 */
export async function runCapture(
  deps: BackupDeps,
  backup: BackupRow,
  onStop: 'retry' | 'fail' = 'fail',
): Promise<BackupRow> {
  const q = backupQueries(deps.db);
  const started = performance.now();
  await q.updateBackup(backup.id, { state: 'running', start_time: new Date(), progress_bytes: null });
  let dump: DumpProcess | undefined;
  let recorded: CatalogSnapshot | undefined;
  const stop = () => dump?.kill();
  deps.stopping?.addEventListener('abort', stop);
  try {
    if (deps.stopping?.aborted) throw new Error('the worker is stopping');
    const { url, server, tool } = await prepare(deps, q, backup);
    const keyring = keyringFromConfig(deps.config);
    const dataKey = randomBytes(32);
    const wrapped = seal(keyring, dataKey, dataKeyContext(backup.id));
    // The catalog is recorded in the snapshot pg_dump dumps, whose transaction ends once the
    // catalog is read and pg_dump has exited (catalog.ts).
    recorded = await openCatalogSnapshot(url);
    const d = startDump(tool.path, url, recorded.snapshot ?? undefined);
    dump = d;
    const catalog = recorded.record(d.finished);
    const key = { dataKey, keyId: keyring.currentId, wrapped };
    const up = await upload(deps, backup, d, key, partSizeFor(server.databaseBytes), progressWriter(q, backup.id));
    const cat = await catalog;
    if (!cat.catalog) deps.log.warn({ backup_id: backup.id, why: cat.why }, 'backup recorded no catalog');
    const found = await verifyStored(deps, backup, dataKey, {
      objectBytes: up.size,
      objectSha256: up.sha256,
      sql: up.sql,
    });
    const finish = new Date();
    const settings = await q.settings(backup.env_id);
    const patch = {
      state: 'succeeded' as const,
      size_bytes: String(up.size),
      gzip_bytes: String(up.gzipBytes),
      sha256: up.sha256,
      sql_bytes: String(found.bytes),
      sql_sha256: found.sha256,
      table_stats: found.tables,
      duration_ms: Math.round(performance.now() - started),
      key_id: keyring.currentId,
      wrapped_key: wrapped,
      finish_time: finish,
      expire_time: new Date(finish.getTime() + retentionFor(settings.retention_days, backup.type) * 86_400_000),
    };
    if (cat.catalog) await catalogStore(deps.db).save(backup.id, cat.catalog);
    if (!(await settleBackup(deps, backup.id, patch, backup.interruptions))) return handedOver(deps, backup);
    deps.log.info({ backup_id: backup.id, bytes: patch.size_bytes, ms: patch.duration_ms }, 'backup succeeded');
    return { ...backup, ...patch };
  } catch (err) {
    dump?.kill();
    return await captureFailed(deps, q, backup, err, onStop);
  } finally {
    await recorded?.close();
    deps.stopping?.removeEventListener('abort', stop);
  }
}
