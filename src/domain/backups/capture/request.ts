// What the API asks of backups themselves: manual backups (with the free ten a day), one backup,
// usage. Each write inserts its row and enqueues its job in one transaction (docs/conventions.md
// "Writes and jobs").
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import { newId } from '../../../ids.ts';
import type { Db } from '../../../db.ts';
import { backupObjectKey, freeManualPerDay, startOfUtcDay, usdPerGbMonth, type ServiceDeps } from '../deps.ts';
import { backupQueries, type BackupRow } from '../queries.ts';
import { captureQueries } from './queries.ts';

/** POST …/backups: a manual backup; the eleventh and later of a UTC day still run, marked billable. */
export async function requestManualBackup(deps: ServiceDeps, envId: string, now = new Date()): Promise<BackupRow> {
  return deps.db.transaction(async (trx) => {
    const q = backupQueries(trx);
    const c = captureQueries(trx);
    await q.lockEnvRow(envId);
    const env = await q.envTarget(envId);
    if (!env) throw new AppError('not_found', 'the environment no longer exists');
    if (!env.database_url_enc) {
      throw new AppError(
        'conflict',
        `${env.name} has no database to back up; the operator sets one with \`cairn admin env set-database\``,
      );
    }
    const active = await c.activeWork(envId);
    if (active)
      throw new AppError(
        'conflict',
        `${active.id} is already running for this environment; one backup or restore at a time`,
        { details: { active: active.id } },
      );
    const usedToday = await c.countManualSince(envId, startOfUtcDay(now));
    const settings = await q.settings(envId);
    const row = await q.insertBackup({
      id: newId('backup', now.getTime()),
      env_id: envId,
      type: 'manual',
      trigger: 'manual',
      slot: null,
      bucket: deps.config.CAIRN_BACKUP_BUCKET,
      object_key: backupObjectKey(env.project_id, env.id, now),
      billable: usedToday >= freeManualPerDay,
      create_time: now,
      expire_time: new Date(now.getTime() + settings.retention_days.manual * 86_400_000),
    });
    await deps.jobs.enqueue(trx, 'backups.capture', { backup_id: row!.id });
    return row!;
  });
}

/** A backup of the caller's environment; another environment's is not_found, not forbidden. */
export async function getBackup(db: Db, envId: string, id: string): Promise<BackupRow> {
  const b = await backupQueries(db).backup(id);
  if (!b || b.env_id !== envId) throw new AppError('not_found', `no backup ${id} in this environment`);
  return b;
}

export async function backupUsage(db: Knex, envId: string, now = new Date()) {
  const q = captureQueries(db);
  const manualToday = await q.countManualSince(envId, startOfUtcDay(now));
  const storedBytes = await q.storedBytes(envId);
  const storedGb = storedBytes / 2 ** 30;
  return {
    date: now.toISOString().slice(0, 10),
    manual_today: manualToday,
    free_manual_per_day: freeManualPerDay,
    free_left: Math.max(0, freeManualPerDay - manualToday),
    billable_today: Math.max(0, manualToday - freeManualPerDay),
    stored_bytes: storedBytes,
    stored_gb: Math.round(storedGb * 1e6) / 1e6,
    usd_per_gb_month: usdPerGbMonth,
    monthly_estimate_usd: Math.round(storedGb * usdPerGbMonth * 1e4) / 1e4,
  };
}
