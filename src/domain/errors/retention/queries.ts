// Retention's SQL: the environment's error settings, the day partitions of error_events, and the
// deletes of what outlived its retention (events, hours, empty groups, groups' tags and users).
import type { Db } from '../../../db.ts';

export interface ErrorSettings {
  retention_days: number;
  max_pending: number;
  update_time: Date | null;
}

export const defaultErrorSettings = { retention_days: 90, max_pending: 100_000 } as const;

/** Which environments a delete reaches: some by id, or every one but some. */
export type EnvFilter = { only: string[] } | { except: string[] };

const partitionName = /^error_events_(\d{4})(\d{2})(\d{2})$/;

/** The day a partition holds, from its name (the migration names them so). */
export function partitionDay(name: string): Date | undefined {
  const m = partitionName.exec(name);
  return m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
}

function envClause(filter: EnvFilter): { sql: string; ids: string[] } {
  return 'only' in filter
    ? { sql: 'env_id = any(?::text[])', ids: filter.only }
    : { sql: 'not (env_id = any(?::text[]))', ids: filter.except };
}

export async function errorSettings(db: Db, envId: string): Promise<ErrorSettings> {
  const row = await db('error_settings').where({ env_id: envId }).first();
  if (!row) return { ...defaultErrorSettings, update_time: null };
  return { retention_days: row.retention_days, max_pending: Number(row.max_pending), update_time: row.update_time };
}

export async function putErrorSettings(db: Db, envId: string, s: Omit<ErrorSettings, 'update_time'>): Promise<Date> {
  const [row] = await db('error_settings')
    .insert({ env_id: envId, ...s, update_time: db.fn.now() })
    .onConflict('env_id')
    .merge()
    .returning('update_time');
  return row.update_time;
}

/** Environments whose retention is not the default, by their retention. */
export async function retentionsByDays(db: Db): Promise<Map<number, string[]>> {
  const rows: { env_id: string; retention_days: number }[] = await db('error_settings')
    .whereNot('retention_days', defaultErrorSettings.retention_days)
    .select('env_id', 'retention_days');
  const out = new Map<number, string[]>();
  for (const r of rows) out.set(r.retention_days, [...(out.get(r.retention_days) ?? []), r.env_id]);
  return out;
}

/** Day partitions from `first` for `days` days (the migration's function; idempotent). */
export async function makePartitions(db: Db, first: Date, days: number): Promise<void> {
  await db.raw('select cairn_error_event_partitions(?::date, ?)', [first.toISOString().slice(0, 10), days]);
}

/** error_events' day partitions, oldest first; one detached by a prune cut short is listed too. */
export async function listPartitions(db: Db): Promise<{ name: string; day: Date }[]> {
  const { rows } = await db.raw<{ rows: { name: string }[] }>(
    `select relname as name from pg_class
        where relname ~ '^error_events_[0-9]{8}$' and relkind = 'r'
          and relnamespace = current_schema()::regnamespace
        order by 1`,
  );
  return rows.flatMap((r) => {
    const day = partitionDay(r.name);
    return day ? [{ name: r.name, day }] : [];
  });
}

/**
 * Drops a day's partition, answering how many events it held. Detached CONCURRENTLY first
 * (Postgres 14+): a plain DROP would wait for an ACCESS EXCLUSIVE lock on error_events, and
 * every insert and read would queue behind it. Only names the migration's function makes are
 * accepted, so nothing else can be dropped through here.
 */
export async function dropPartition(db: Db, name: string): Promise<number> {
  if (!partitionName.test(name)) throw new Error(`not an error_events partition: ${name}`);
  const { rows } = await db.raw<{ rows: { n: string }[] }>(`select count(*) as n from ${name}`);
  // Attached, or detached by a prune cut short (its session died): that detach is finished.
  const link = await db.raw<{ rows: { pending: boolean }[] }>(
    `select inhdetachpending as pending from pg_inherits
        where inhrelid = ?::regclass and inhparent = 'error_events'::regclass`,
    [name],
  );
  const state = link.rows[0];
  if (state)
    await db.raw(`alter table error_events detach partition ${name} ${state.pending ? 'finalize' : 'concurrently'}`);
  await db.raw(`drop table ${name}`);
  return Number(rows[0]?.n ?? 0);
}

/** At most `limit` events received before `before`, of the environments `filter` names. */
export async function deleteEvents(db: Db, filter: EnvFilter, before: Date, limit: number): Promise<number> {
  const env = envClause(filter);
  const result = await db.raw(
    `delete from error_events where (uid, receive_time) in (
         select uid, receive_time from error_events where ${env.sql} and receive_time < ? limit ?)`,
    [env.ids, before, limit],
  );
  return result.rowCount ?? 0;
}

/** At most `limit` hourly counts (error_group_hours) of hours that ended before `before`. */
export async function deleteHours(db: Db, filter: EnvFilter, before: Date, limit: number): Promise<number> {
  const env = envClause(filter);
  const result = await db.raw(
    `delete from error_group_hours where (group_id, hour) in (
         select group_id, hour from error_group_hours where ${env.sql} and hour < ?::timestamptz - interval '1 hour' limit ?)`,
    [env.ids, before, limit],
  );
  return result.rowCount ?? 0;
}

/**
 * At most `limit` groups left without events, untouched since `before`. The outer condition on
 * update_time is checked again on a row a concurrent store has just updated (READ COMMITTED
 * re-checks a changed row), so a group that gets a new occurrence meanwhile is never deleted
 * with it: every stored occurrence sets its group's update_time (intake/store-queries.ts).
 */
export async function deleteEmptyGroups(db: Db, filter: EnvFilter, before: Date, limit: number): Promise<number> {
  const env = envClause(filter);
  const result = await db.raw(
    `delete from error_groups g where g.update_time < ? and g.id in (
         select id from error_groups x where ${env.sql} and x.update_time < ?
            and not exists (select 1 from error_events e where e.group_id = x.id)
          limit ?)`,
    [before, env.ids, before, limit],
  );
  return result.rowCount ?? 0;
}

/**
 * At most `limit` tag rows (error_group_tags) not seen since `before`: every event that carried
 * the tag is past retention (a row's time is its last event's receipt). Locked in the store's
 * order, (group_id, key, value), so a prune and a store never deadlock; a row a store has just
 * seen again is re-checked on its new version and kept.
 */
export async function deleteTags(db: Db, filter: EnvFilter, before: Date, limit: number): Promise<number> {
  const env = envClause(filter);
  const result = await db.raw(
    `delete from error_group_tags where (group_id, key, value) in (
         select group_id, key, value from error_group_tags where ${env.sql} and last_seen_time < ?
          order by group_id, key, value limit ? for update)
       and last_seen_time < ?`,
    [env.ids, before, limit, before],
  );
  return result.rowCount ?? 0;
}

/**
 * User rows (error_group_users) not seen since `before`, of at most `limit` of them's groups, and
 * those groups' `user_count` counted again. The groups are locked first, in the store's order
 * ((env_id, fingerprint), then their user rows): a store changes a group's user rows only under
 * its group's lock, so under it the count reads every committed row, and nothing deadlocks.
 */
export async function deleteUsers(db: Db, filter: EnvFilter, before: Date, limit: number): Promise<number> {
  const env = envClause(filter);
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw<{ rows: { id: string }[] }>(
      `select id from error_groups where id in (
           select group_id from error_group_users where ${env.sql} and last_seen_time < ? limit ?)
         order by env_id, fingerprint for update`,
      [env.ids, before, limit],
    );
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    const deleted = await trx.raw(
      'delete from error_group_users where group_id = any(?::text[]) and last_seen_time < ?',
      [ids, before],
    );
    await trx.raw(
      `update error_groups g set user_count = (select count(*) from error_group_users u where u.group_id = g.id)
        where g.id = any(?::text[])`,
      [ids],
    );
    return deleted.rowCount ?? 0;
  });
}
