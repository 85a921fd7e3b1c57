// SQL of the cron side of backups: settings changes, the environments a slot backs up, expired
// backups to prune, and the runs to reap.
import type { Db } from '../../../db.ts';
import {
  defaultScheduleHour,
  type BackupRow,
  type BackupSettings,
  type EnvTarget,
  type OperationRow,
} from '../queries.ts';

export function settingsQueries(db: Db) {
  return {
    async saveSettings(envId: string, s: BackupSettings): Promise<void> {
      const row = {
        env_id: envId,
        schedule_enabled: s.schedule_enabled,
        schedule_hour: s.schedule_hour_utc,
        daily_days: s.retention_days.daily,
        weekly_days: s.retention_days.weekly,
        monthly_days: s.retention_days.monthly,
        manual_days: s.retention_days.manual,
        drill_schedule: s.drill_schedule,
        update_time: db.fn.now(),
      };
      await db('backup_settings').insert(row).onConflict('env_id').merge();
      // Retention applies to backups already taken, as Heroku's schedule changes do.
      await db.raw(
        `update backups set expire_time = coalesce(finish_time, create_time) + make_interval(days => case type
           when 'daily' then ?::int when 'weekly' then ?::int when 'monthly' then ?::int else ?::int end)
         where env_id = ?`,
        [s.retention_days.daily, s.retention_days.weekly, s.retention_days.monthly, s.retention_days.manual, envId],
      );
    },
  };
}

export function scheduleQueries(db: Db) {
  return {
    /**
     * Envs with a database, schedules on, and their hour come by `hourUtc` of the slot's day
     * without a backup of `type` in `slot` yet: the targets of a cron slot. A slot that ran late
     * (a backlog, no worker over the hour) still takes the environments whose hour it missed.
     */
    async scheduledEnvs(hourUtc: number, type: string, slot: string): Promise<EnvTarget[]> {
      return db('envs as e')
        .leftJoin('backup_settings as s', 's.env_id', 'e.id')
        .whereNotNull('e.database_url_enc')
        .where((q) => q.whereNull('s.env_id').orWhere('s.schedule_enabled', true))
        .whereRaw('coalesce(s.schedule_hour, ?) <= ?', [defaultScheduleHour, hourUtc])
        .whereNotExists((q) =>
          q
            .select(db.raw('1'))
            .from('backups as b')
            .whereRaw('b.env_id = e.id')
            .where({ 'b.type': type, 'b.slot': slot }),
        )
        .select('e.id', 'e.name', 'e.project_id', 'e.mode', 'e.database_url_enc');
    },

    /** Finished backups past their expiry that no pending or running restore still reads. */
    async expired(now: Date, limit: number): Promise<BackupRow[]> {
      return db('backups as b')
        .whereIn('b.state', ['succeeded', 'failed'])
        .where('b.expire_time', '<=', now)
        .whereNotExists((q) =>
          q
            .select(db.raw('1'))
            .from('backup_operations as o')
            .whereRaw('o.backup_id = b.id')
            .whereIn('o.state', ['pending', 'running']),
        )
        .orderBy('b.expire_time', 'asc')
        .limit(limit)
        .select('b.*');
    },
  };
}

export function reapQueries(db: Db) {
  return {
    async runningEnvIds(): Promise<string[]> {
      const rows = await db.raw<{ rows: { env_id: string }[] }>(
        "select env_id from backups where state = 'running' union select env_id from backup_operations where state = 'running' and kind = 'restore'",
      );
      return rows.rows.map((r) => r.env_id);
    },

    async runningBackups(envId: string): Promise<BackupRow[]> {
      return db('backups').where({ env_id: envId, state: 'running' }).select();
    },

    /** Running restores (drills hold no environment lock: their own job's heartbeat recovers them). */
    async runningOperations(envId: string): Promise<OperationRow[]> {
      return db('backup_operations').where({ env_id: envId, state: 'running', kind: 'restore' }).select();
    },
  };
}
