// SQL of restore drills: the one drill at a time rule, which environments are due, when each was
// last drilled, and the scratch database a drill restores into (on the environment's server).
import type pg from 'pg';
import type { Db } from '../../../db.ts';
import type { EnvTarget } from '../queries.ts';

export function drillQueries(db: Db) {
  return {
    /** The drill of this environment that is queued or running, if any. */
    async activeDrill(envId: string): Promise<{ id: string } | undefined> {
      return db('backup_operations')
        .where({ env_id: envId, kind: 'drill' })
        .whereIn('state', ['pending', 'running'])
        .first('id');
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
  };
}

export async function dropDatabase(client: pg.Client, name: string): Promise<void> {
  // WITH (FORCE) ends sessions left by a killed psql (PostgreSQL 13+); older servers lack it.
  await client
    .query(`drop database if exists "${name}" with (force)`)
    .catch(() => client.query(`drop database if exists "${name}"`));
}

export async function createDatabase(client: pg.Client, name: string): Promise<void> {
  await client.query(`create database "${name}" template template0`);
}
