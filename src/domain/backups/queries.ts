// SQL for backups, restore operations and retention settings. Every read that answers a caller
// is scoped by environment; the worker reads by id.
import type { Db } from '../../db.ts';
import type { TableFigures } from './dump-check.ts';
import type { Skipped } from './role-filter.ts';

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
  /** What pg_dump wrote (uncompressed), as its compressor counted and hashed it. */
  sql_bytes: string | null;
  sql_sha256: string | null;
  /** Per-table row counts and checksums found when the stored object was read back (dump-check.ts). */
  table_stats: Record<string, TableFigures> | null;
  /** The latest restore drill of this backup. */
  verified_time: Date | null;
  verification: Verification | null;
  /** Runs cut off by a killed or stopped worker; the backup runs again (same id) up to `maxInterruptions`. */
  interruptions: number;
  billable: boolean;
  error: string | null;
  create_time: Date;
  start_time: Date | null;
  finish_time: Date | null;
  expire_time: Date;
  /** While running: bytes stored so far (bigint, as a string). */
  progress_bytes: string | null;
}

export interface Verification {
  result: 'passed' | 'failed';
  reason?: string;
}

export type DrillSchedule = 'off' | 'daily' | 'weekly';

export interface OperationRow {
  id: string;
  kind: 'restore' | 'drill';
  requester_env_id: string;
  env_id: string;
  backup_id: string | null;
  pre_backup_id: string | null;
  state: RunState;
  phase: string | null;
  bytes_read: string;
  bytes_total: string;
  /** The restore's transaction id in its target, recorded just before COMMIT was let through. */
  restore_xid: string | null;
  error: { code: string; message: string } | null;
  /** A restore's statements left out because the target lacks a role or its role cannot act as one (role-filter.ts). */
  skipped: Skipped | null;
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

/** SPEC "Backup schedule": 03:00 UTC. */
export const defaultScheduleHour = 3;

export interface BackupSettings {
  schedule_enabled: boolean;
  /** The UTC hour of the scheduled backups (SPEC's 03:00 unless changed). */
  schedule_hour_utc: number;
  retention_days: RetentionDays;
  /** null: the mode's default (drill.ts). */
  drill_schedule: DrillSchedule | null;
}

export const defaultRetention: RetentionDays = { daily: 7, weekly: 30, monthly: 90, manual: 90 };

export interface EnvTarget {
  id: string;
  name: string;
  project_id: string;
  mode: 'test' | 'live';
  database_url_enc: string | null;
}

export function backupQueries(db: Db) {
  return {
    async envTarget(envId: string): Promise<EnvTarget | undefined> {
      return db('envs').where({ id: envId }).first('id', 'name', 'project_id', 'mode', 'database_url_enc');
    },

    /** The environments of `envId`'s project (where its backups can be restored), by name. */
    async projectEnvNames(envId: string): Promise<string[]> {
      return db('envs')
        .whereIn('project_id', db('envs').where({ id: envId }).select('project_id'))
        .orderBy('name')
        .pluck('name');
    },

    async envByName(name: string): Promise<EnvTarget | undefined> {
      return db('envs').where({ name }).first('id', 'name', 'project_id', 'mode', 'database_url_enc');
    },

    /** Serialises writers of one environment's backups (limits and the one-at-a-time rule). */
    async lockEnvRow(envId: string): Promise<void> {
      await db.raw('select 1 from envs where id = ? for update', [envId]);
    },

    async insertBackup(
      row: Pick<
        BackupRow,
        'id' | 'env_id' | 'type' | 'trigger' | 'slot' | 'bucket' | 'object_key' | 'billable' | 'expire_time'
      > & { create_time?: Date },
    ): Promise<BackupRow | undefined> {
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
      const { table_stats, verification, ...plain } = patch;
      await db('backups')
        .where({ id })
        .update({
          ...plain,
          ...(table_stats !== undefined
            ? { table_stats: table_stats === null ? null : JSON.stringify(table_stats) }
            : {}),
          ...(verification !== undefined
            ? { verification: verification === null ? null : JSON.stringify(verification) }
            : {}),
        });
    },

    /** Manual backups a user asked for since `since` (pre-restore copies are free and not counted). */
    /** Manual backups made since `since`, those deleted since included (their record: deleted_backups). */
    async countManualSince(envId: string, since: Date): Promise<number> {
      const { rows } = await db.raw<{ rows: { n: string }[] }>(
        `select (select count(*) from backups where env_id = ? and trigger = 'manual' and create_time >= ?)
              + (select count(*) from deleted_backups where env_id = ? and trigger = 'manual' and create_time >= ?) as n`,
        [envId, since, envId, since],
      );
      return Number(rows[0]?.n ?? 0);
    },

    async storedBytes(envId: string): Promise<number> {
      const row = await db('backups')
        .where({ env_id: envId, state: 'succeeded' })
        .sum<{ s: string | null }[]>('size_bytes as s')
        .first();
      return Number(row?.s ?? 0);
    },

    /**
     * The backup or restore of this environment that is queued or running, if any. Drills are not
     * counted: they read a stored object and write only a scratch database, never the environment's.
     */
    async activeWork(envId: string): Promise<{ id: string } | undefined> {
      const backup = await db('backups').where({ env_id: envId }).whereIn('state', ['pending', 'running']).first('id');
      if (backup) return backup;
      return db('backup_operations')
        .where({ env_id: envId, kind: 'restore' })
        .whereIn('state', ['pending', 'running'])
        .first('id');
    },

    /** The drill of this environment that is queued or running, if any. */
    async activeDrill(envId: string): Promise<{ id: string } | undefined> {
      return db('backup_operations')
        .where({ env_id: envId, kind: 'drill' })
        .whereIn('state', ['pending', 'running'])
        .first('id');
    },

    /** The newest succeeded backup of the environment: what a drill restores. */
    async latestSucceeded(envId: string): Promise<BackupRow | undefined> {
      return db('backups').where({ env_id: envId, state: 'succeeded' }).orderBy('id', 'desc').first();
    },

    /** Succeeded backups whose latest drill failed: what /readyz reports. */
    async countFailedDrills(): Promise<number> {
      const row = await db('backups')
        .where({ state: 'succeeded' })
        .whereRaw("verification->>'result' = 'failed'")
        .count<{ n: string }[]>('* as n')
        .first();
      return Number(row?.n ?? 0);
    },

    async insertOperation(
      row: Pick<OperationRow, 'id' | 'kind' | 'requester_env_id' | 'env_id' | 'backup_id'>,
    ): Promise<OperationRow> {
      const [inserted] = await db('backup_operations').insert(row).returning('*');
      return inserted as OperationRow;
    },

    async operation(id: string): Promise<OperationRow | undefined> {
      return db('backup_operations').where({ id }).first();
    },

    async updateOperation(id: string, patch: Partial<Omit<OperationRow, 'error'>> & { error?: string }): Promise<void> {
      await db('backup_operations')
        .where({ id })
        .update({ ...patch, update_time: db.fn.now() });
    },

    /**
     * Records a restore's transaction id, the step that lets its COMMIT through, only while the
     * operation is `running`: one settled meanwhile (its worker was taken for gone, and the
     * settling said the target was not changed) is never changed under that word. False then.
     */
    async recordRestoreXid(id: string, xid: string): Promise<boolean> {
      const n = await db('backup_operations')
        .where({ id, state: 'running' })
        .update({ restore_xid: xid, phase: 'committing', update_time: db.fn.now() });
      return n > 0;
    },

    async settings(envId: string): Promise<BackupSettings> {
      const row = await db('backup_settings').where({ env_id: envId }).first();
      if (!row)
        return {
          schedule_enabled: true,
          schedule_hour_utc: defaultScheduleHour,
          retention_days: { ...defaultRetention },
          drill_schedule: null,
        };
      return {
        schedule_enabled: row.schedule_enabled,
        schedule_hour_utc: row.schedule_hour,
        retention_days: {
          daily: row.daily_days,
          weekly: row.weekly_days,
          monthly: row.monthly_days,
          manual: row.manual_days,
        },
        drill_schedule: row.drill_schedule,
      };
    },

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

    /**
     * Environments whose drill is due: a database, a succeeded backup, no drill queued or running,
     * and a schedule (the mode's default where none is set) whose period has passed since the last.
     */
    async dueDrillEnvs(now: Date, limit: number): Promise<EnvTarget[]> {
      const rows = await db.raw<{ rows: EnvTarget[] }>(
        `select e.id, e.name, e.project_id, e.mode, e.database_url_enc
           from envs e
           left join backup_settings s on s.env_id = e.id
          where e.database_url_enc is not null
            and coalesce(s.drill_schedule, case e.mode when 'live' then 'off' else 'weekly' end) <> 'off'
            and (s.last_drill_time is null or s.last_drill_time <= ?::timestamptz - case coalesce(s.drill_schedule, 'weekly')
                   when 'daily' then interval '1 day' else interval '7 days' end)
            and exists (select 1 from backups b where b.env_id = e.id and b.state = 'succeeded')
            and not exists (select 1 from backup_operations o where o.env_id = e.id and o.kind = 'drill' and o.state in ('pending', 'running'))
          order by s.last_drill_time nulls first, e.id
          limit ?`,
        [now, limit],
      );
      return rows.rows;
    },

    async markDrilled(envId: string, at: Date): Promise<void> {
      await db('backup_settings')
        .insert({ env_id: envId, last_drill_time: at })
        .onConflict('env_id')
        .merge(['last_drill_time']);
    },

    async deleteBackup(id: string): Promise<void> {
      await db('backups').where({ id }).delete();
    },

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
