// SQL of taking and deleting backups: the day's manual count, stored bytes, the one-at-a-time
// rule, a deleted backup's record, and the server figures a capture reads from its source.
import type pg from 'pg';
import type { Db } from '../../../db.ts';
import type { BackupRow } from '../queries.ts';

export function captureQueries(db: Db) {
  return {
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
  };
}

export function deleteQueries(db: Db) {
  return {
    /** The environment's backup, its row locked until the transaction ends. */
    async lockedBackup(envId: string, id: string): Promise<BackupRow | undefined> {
      return db('backups').where({ id, env_id: envId }).forUpdate().first();
    },

    /** A restore or drill still reading the backup, if any. */
    async activeReader(backupId: string): Promise<{ id: string } | undefined> {
      return db('backup_operations')
        .where({ backup_id: backupId })
        .whereIn('state', ['pending', 'running'])
        .first('id');
    },

    /** Kept on record: the day's free count and billing still see it (migrations: deleted_backups). */
    async recordDeleted(b: BackupRow): Promise<void> {
      await db('deleted_backups').insert({
        id: b.id,
        env_id: b.env_id,
        type: b.type,
        trigger: b.trigger,
        billable: b.billable,
        size_bytes: b.size_bytes,
        create_time: b.create_time,
      });
    },
  };
}

/** The source server's version and its database's size on disk. */
export async function serverFigures(client: pg.Client): Promise<{ versionNum: number; databaseBytes: number }> {
  const res = await client.query<{ v: string; size: string }>(
    "select current_setting('server_version_num') as v, pg_database_size(current_database()) as size",
  );
  return { versionNum: Number(res.rows[0]!.v), databaseBytes: Number(res.rows[0]!.size) };
}
