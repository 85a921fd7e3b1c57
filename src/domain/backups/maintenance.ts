// The cron side of backups: one backup per environment per slot, retention pruning, and reaping
// runs whose worker died.
import type { BackupJobs as Jobs } from './queues.ts';

export type Enqueuer = Pick<Jobs, 'enqueue'>;
import { newId } from '../../ids.ts';
import { interruptBackup } from './capture.ts';
import { backupObjectKey, retentionFor, type BackupDeps } from './deps.ts';
import { tryLockEnv } from './lock.ts';
import { backupQueries } from './queries.ts';
import { reconcileRestore, sweepTempDirs } from './restore.ts';

export type ScheduledType = 'daily' | 'weekly' | 'monthly';

/** The slot a cron firing belongs to: its UTC date. A redelivered or duplicated firing maps to the same slot. */
export function slotOf(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/**
 * Creates this slot's backup for every environment with a database, schedules on and its backup
 * hour reached (the cron fires hourly; 03:00 UTC unless the environment chose another), that has
 * none in this slot yet. `now` is when the cron fired, not when the job ran. The unique
 * (env, type, slot) row makes it once per slot however many times the job runs; the row and its
 * capture job are inserted in one transaction, so neither exists without the other.
 */
export async function scheduleSlot(deps: BackupDeps, jobs: Enqueuer, type: ScheduledType, now: Date): Promise<number> {
  const slot = slotOf(now);
  let created = 0;
  for (const env of await backupQueries(deps.db).scheduledEnvs(now.getUTCHours(), type, slot)) {
    await deps.db.transaction(async (trx) => {
      const q = backupQueries(trx);
      const settings = await q.settings(env.id);
      const row = await q.insertBackup({
        id: newId('backup'),
        env_id: env.id,
        type,
        trigger: 'schedule',
        slot,
        bucket: deps.config.CAIRN_BACKUP_BUCKET,
        object_key: backupObjectKey(env.project_id, env.id, now),
        billable: false,
        create_time: now,
        expire_time: new Date(now.getTime() + retentionFor(settings.retention_days, type) * 86_400_000),
      });
      if (!row) return;
      await jobs.enqueue(trx, 'backups.capture', { backup_id: row.id });
      created += 1;
    });
  }
  return created;
}

/** Deletes expired backups: the object first, then the row, so a crash between leaves a row to retry. */
export async function pruneExpired(deps: BackupDeps, now: Date): Promise<string[]> {
  const q = backupQueries(deps.db);
  const removed: string[] = [];
  for (;;) {
    const batch = await q.expired(now, 100);
    if (batch.length === 0) return removed;
    for (const b of batch) {
      await deps.store.abortIncompleteUploads(b.bucket, b.object_key);
      await deps.store.delete(b.bucket, b.object_key);
      await q.deleteBackup(b.id);
      removed.push(b.id);
    }
  }
}

/**
 * Fails runs whose worker is gone. A live run holds its environment's advisory lock for its whole
 * length, so a `running` row whose lock we can take has no one working on it.
 */
export async function reapOrphans(deps: BackupDeps): Promise<{ backups: string[]; operations: string[] }> {
  const q = backupQueries(deps.db);
  const out = { backups: [] as string[], operations: [] as string[] };
  await sweepTempDirs();
  for (const envId of await q.runningEnvIds()) {
    const lock = await tryLockEnv(deps.db, envId);
    if (!lock) continue;
    try {
      // Cut off: the upload is aborted now; the backup's job runs it again when pg-boss redelivers it.
      for (const b of await q.runningBackups(envId)) {
        await interruptBackup(deps, b, 'the worker running this backup stopped before it finished');
        out.backups.push(b.id);
      }
      for (const op of await q.runningOperations(envId)) {
        if ((await reconcileRestore(deps, op)) !== 'undecided') out.operations.push(op.id);
      }
    } finally {
      await lock.release();
    }
  }
  return out;
}
