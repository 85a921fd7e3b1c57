// SQL for backups, restore operations and retention settings. Every read that answers a caller
// is scoped by environment; the worker reads by id.
import type pg from 'pg';
import type { Db } from '../../db.ts';
import type { TableFigures } from './format/dump-check.ts';
import type { Skipped } from './restore/role-filter.ts';

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

/** docs/api.md "Limits": 03:00 UTC. */
export const defaultScheduleHour = 3;

export interface BackupSettings {
  schedule_enabled: boolean;
  /** The UTC hour of the scheduled backups (03:00 unless changed: docs/api.md "Limits"). */
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

function envQueries(db: Db) {
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
  };
}

function backupRowQueries(db: Db) {
  return {
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

    /** The state a settling run decides on, its row locked until the transaction ends (settle.ts). */
    async lockedBackupState(id: string): Promise<{ state: string; interruptions: number } | undefined> {
      return db('backups').where({ id }).forUpdate().first('state', 'interruptions');
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

    async deleteBackup(id: string): Promise<void> {
      await db('backups').where({ id }).delete();
    },
  };
}

function operationQueries(db: Db) {
  return {
    async insertOperation(
      row: Pick<OperationRow, 'id' | 'kind' | 'requester_env_id' | 'env_id' | 'backup_id'>,
    ): Promise<OperationRow> {
      const [inserted] = await db('backup_operations').insert(row).returning('*');
      return inserted as OperationRow;
    },

    async operation(id: string): Promise<OperationRow | undefined> {
      return db('backup_operations').where({ id }).first();
    },

    /** The state a settling run decides on, its row locked until the transaction ends (settle.ts). */
    async lockedOperationState(
      id: string,
    ): Promise<{ state: string; kind: string; restore_xid: string | null } | undefined> {
      return db('backup_operations').where({ id }).forUpdate().first('state', 'kind', 'restore_xid');
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
  };
}

async function readSettings(db: Db, envId: string): Promise<BackupSettings> {
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
}

/**
 * The rows every part of backups reads and writes: environments, backups, operations and the
 * settings. What one part alone asks sits in its folder's own query module.
 */
export function backupQueries(db: Db) {
  return {
    ...envQueries(db),
    ...backupRowQueries(db),
    ...operationQueries(db),
    settings: (envId: string) => readSettings(db, envId),
  };
}

const lockSpace = 727306;

/** One environment's session advisory lock, without waiting (lock.ts); false when another session holds it. */
export async function tryAdvisoryLock(client: pg.Client, envId: string): Promise<boolean> {
  const res = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as ok', [
    lockSpace,
    envId,
  ]);
  return res.rows[0]?.ok === true;
}

export async function advisoryUnlock(client: pg.Client, envId: string): Promise<void> {
  await client.query('select pg_advisory_unlock($1, hashtext($2))', [lockSpace, envId]);
}
