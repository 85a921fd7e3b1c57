// SQL for backups, restore operations and retention settings. Every read that answers a caller
// is scoped by environment; the worker reads by id.
import type { Db } from '../../db.ts';

export type BackupType = 'daily' | 'weekly' | 'monthly' | 'manual';
export type BackupTrigger = 'schedule' | 'manual' | 'pre_restore';
export type RunState = 'pending' | 'running' | 'succeeded' | 'failed';

export interface BackupRow {
  id: string;
  env_id: string;
  type: BackupType;
  trigger: BackupTrigger;
  slot: string | null;
  state: RunState;
  bucket: string;
  object_key: string;
  size_bytes: string | null;
  gzip_bytes: string | null;
  sha256: string | null;
  duration_ms: number | null;
  pg_version: string | null;
  pg_dump_version: string | null;
  key_id: string | null;
  wrapped_key: string | null;
  billable: boolean;
  error: string | null;
  create_time: Date;
  start_time: Date | null;
  finish_time: Date | null;
  expire_time: Date;
}

export interface OperationRow {
  id: string;
  kind: 'restore';
  requester_env_id: string;
  env_id: string;
  backup_id: string | null;
  pre_backup_id: string | null;
  state: RunState;
  phase: string | null;
  bytes_read: string;
  bytes_total: string;
  error: { code: string; message: string } | null;
  create_time: Date;
  update_time: Date;
  finish_time: Date | null;
}

export interface RetentionDays {
  daily: number;
  weekly: number;
  monthly: number;
  manual: number;
}

export interface BackupSettings {
  schedule_enabled: boolean;
  retention_days: RetentionDays;
}

export const defaultRetention: RetentionDays = { daily: 7, weekly: 30, monthly: 90, manual: 90 };

export interface EnvTarget {
  id: string;
  name: string;
  project_id: string;
  database_url_enc: string | null;
}

export function backupQueries(db: Db) {
  return {
    async envTarget(envId: string): Promise<EnvTarget | undefined> {
      return db('envs').where({ id: envId }).first('id', 'name', 'project_id', 'database_url_enc');
    },

    async envByName(name: string): Promise<EnvTarget | undefined> {
      return db('envs').where({ name }).first('id', 'name', 'project_id', 'database_url_enc');
    },

    /** Serialises writers of one environment's backups (limits and the one-at-a-time rule). */
    async lockEnvRow(envId: string): Promise<void> {
      await db.raw('select 1 from envs where id = ? for update', [envId]);
    },

    async insertBackup(row: Omit<BackupRow, 'state' | 'size_bytes' | 'gzip_bytes' | 'sha256' | 'duration_ms' | 'pg_version' | 'pg_dump_version' | 'key_id' | 'wrapped_key' | 'error' | 'start_time' | 'finish_time' | 'create_time'> & { create_time?: Date }): Promise<BackupRow | undefined> {
      const [inserted] = await db('backups').insert(row).onConflict(['env_id', 'type', 'slot']).ignore().returning('*');
      return inserted as BackupRow | undefined;
    },

    async backup(id: string): Promise<BackupRow | undefined> {
      return db('backups').where({ id }).first();
    },

    /** Newest first; ids are ULIDs, so id order is creation order. */
    async listBackups(envId: string, limit: number, afterId?: string): Promise<BackupRow[]> {
      const q = db('backups').where({ env_id: envId }).orderBy('id', 'desc').limit(limit);
      if (afterId) q.where('id', '<', afterId);
      return q.select();
    },

    async updateBackup(id: string, patch: Partial<BackupRow>): Promise<void> {
      await db('backups').where({ id }).update(patch);
    },

    /** Manual backups a user asked for since `since` (pre-restore copies are free and not counted). */
    async countManualSince(envId: string, since: Date): Promise<number> {
      const row = await db('backups').where({ env_id: envId, trigger: 'manual' }).where('create_time', '>=', since).count<{ n: string }[]>('* as n').first();
      return Number(row?.n ?? 0);
    },

    async storedBytes(envId: string): Promise<number> {
      const row = await db('backups').where({ env_id: envId, state: 'succeeded' }).sum<{ s: string | null }[]>('size_bytes as s').first();
      return Number(row?.s ?? 0);
    },

    /** The backup or restore of this environment that is queued or running, if any. */
    async activeWork(envId: string): Promise<{ id: string } | undefined> {
      const backup = await db('backups').where({ env_id: envId }).whereIn('state', ['pending', 'running']).first('id');
      if (backup) return backup;
      return db('backup_operations').where({ env_id: envId }).whereIn('state', ['pending', 'running']).first('id');
    },

    async insertOperation(row: Pick<OperationRow, 'id' | 'kind' | 'requester_env_id' | 'env_id' | 'backup_id'>): Promise<OperationRow> {
      const [inserted] = await db('backup_operations').insert(row).returning('*');
      return inserted as OperationRow;
    },

    async operation(id: string): Promise<OperationRow | undefined> {
      return db('backup_operations').where({ id }).first();
    },

    async updateOperation(id: string, patch: Partial<Omit<OperationRow, 'error'>> & { error?: string }): Promise<void> {
      await db('backup_operations').where({ id }).update({ ...patch, update_time: db.fn.now() });
    },

    async settings(envId: string): Promise<BackupSettings> {
      const row = await db('backup_settings').where({ env_id: envId }).first();
      if (!row) return { schedule_enabled: true, retention_days: { ...defaultRetention } };
      return {
        schedule_enabled: row.schedule_enabled,
        retention_days: { daily: row.daily_days, weekly: row.weekly_days, monthly: row.monthly_days, manual: row.manual_days },
      };
    },

    async saveSettings(envId: string, s: BackupSettings): Promise<void> {
      const row = {
        env_id: envId, schedule_enabled: s.schedule_enabled,
        daily_days: s.retention_days.daily, weekly_days: s.retention_days.weekly,
        monthly_days: s.retention_days.monthly, manual_days: s.retention_days.manual,
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

    /** Envs with a database and schedules on: the targets of a cron slot. */
    async scheduledEnvs(): Promise<EnvTarget[]> {
      return db('envs as e')
        .leftJoin('backup_settings as s', 's.env_id', 'e.id')
        .whereNotNull('e.database_url_enc')
        .where((q) => q.whereNull('s.env_id').orWhere('s.schedule_enabled', true))
        .select('e.id', 'e.name', 'e.project_id', 'e.database_url_enc');
    },

    /** Finished backups past their expiry that no pending or running restore still reads. */
    async expired(now: Date, limit: number): Promise<BackupRow[]> {
      return db('backups as b')
        .whereIn('b.state', ['succeeded', 'failed'])
        .where('b.expire_time', '<=', now)
        .whereNotExists((q) => q.select(db.raw('1')).from('backup_operations as o').whereRaw('o.backup_id = b.id').whereIn('o.state', ['pending', 'running']))
        .orderBy('b.expire_time', 'asc')
        .limit(limit)
        .select('b.*');
    },

    async deleteBackup(id: string): Promise<void> {
      await db('backups').where({ id }).delete();
    },

    async runningEnvIds(): Promise<string[]> {
      const rows = await db.raw<{ rows: { env_id: string }[] }>(
        "select env_id from backups where state = 'running' union select env_id from backup_operations where state = 'running'",
      );
      return rows.rows.map((r) => r.env_id);
    },

    async runningBackups(envId: string): Promise<BackupRow[]> {
      return db('backups').where({ env_id: envId, state: 'running' }).select();
    },

    async runningOperations(envId: string): Promise<OperationRow[]> {
      return db('backup_operations').where({ env_id: envId, state: 'running' }).select();
    },
  };
}
