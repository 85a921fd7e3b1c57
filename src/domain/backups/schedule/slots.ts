// The backup cron: one backup per environment per slot.
import { newId } from '../../../ids.ts';
import { backupObjectKey, retentionFor, type BackupDeps, type Enqueuer } from '../deps.ts';
import { backupQueries } from '../queries.ts';
import { scheduleQueries } from './queries.ts';

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
  for (const env of await scheduleQueries(deps.db).scheduledEnvs(now.getUTCHours(), type, slot)) {
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
