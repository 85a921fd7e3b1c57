// Reads of groups and events, and the triage update. The triage check and change are one
// statement: of concurrent calls carrying one etag exactly one matches the row once it holds the
// row lock, and the others see the new etag.
import type { Knex } from 'knex';
import type { Db, SqlTx } from '../../../db.ts';
import { ulidTime } from '../../../ids.ts';
import { unpackBody } from '../pipeline/event-codec.ts';
import type { EventBody } from '../pipeline/process.ts';
import type { ErrorGroupSort } from '../../../contract/errors.ts';
import { sortedAfter, whereSearch } from '../search/queries.ts';
import type { SearchTerm } from '../search/types.ts';

export type GroupState = 'unresolved' | 'acknowledged' | 'resolved';

/** A fresh, opaque etag, made in SQL so the state check and the change stay one statement. */
export const newEtagSql = `substr(md5(random()::text || clock_timestamp()::text), 1, 16)`;

export interface GroupRow {
  id: string;
  env_id: string;
  fingerprint: string;
  title: string;
  culprit: string;
  service_name: string;
  state: GroupState;
  etag: string;
  first_seen_time: Date;
  last_seen_time: Date;
  occurrence_count: string | number;
  /** Distinct users of its events (error_group_users). */
  user_count: number;
  last_release: string;
  resolve_time: Date | null;
  grouping: unknown;
}

export interface EventRow {
  uid: string;
  env_id: string;
  group_id: string;
  event_time: Date;
  receive_time: Date;
  create_time: Date;
  body: EventBody;
}

export interface GroupFilter {
  /** Terms of a search (search/parse.ts), all of which must hold. */
  terms?: readonly SearchTerm[];
  /** The order, newest last seen first by default. */
  sort?: ErrorGroupSort;
  state?: GroupState;
  service_name?: string;
  last_seen_after?: string;
  last_seen_before?: string;
}

export const groupColumns = [
  'id',
  'env_id',
  'fingerprint',
  'title',
  'culprit',
  'service_name',
  'state',
  'etag',
  'first_seen_time',
  'last_seen_time',
  'occurrence_count',
  'user_count',
  'last_release',
  'resolve_time',
  'grouping',
] as const;
const eventColumns = [
  'uid',
  'env_id',
  'group_id',
  'event_time',
  'receive_time',
  'create_time',
  'body_deflated',
] as const;

const eventRow = ({ body_deflated, ...r }: Omit<EventRow, 'body'> & { body_deflated: Buffer }): EventRow => ({
  ...r,
  body: unpackBody(body_deflated),
});

export interface TriageOutcome {
  found: boolean;
  prior?: { state: GroupState; etag: string };
  changed?: GroupRow;
}

/** A position in a list of groups: the last row's sort value (as text) and id. */
export interface GroupPosition {
  v: string;
  id: string;
}

export async function listGroups(
  db: Db,
  envId: string,
  f: GroupFilter,
  after: GroupPosition | undefined,
  limit: number,
): Promise<GroupRow[]> {
  return listGroupsQuery(db, envId, f, after, limit);
}

/** The statement listGroups runs (its plan is checked in test/errors/search-plans.test.ts). */
export function listGroupsQuery(
  db: Db,
  envId: string,
  f: GroupFilter,
  after: GroupPosition | undefined,
  limit: number,
): Knex.QueryBuilder<GroupRow, GroupRow[]> {
  const q = db({ g: 'error_groups' })
    .where({ 'g.env_id': envId })
    .select(groupColumns.map((c) => `g.${c}`))
    .limit(limit);
  if (f.state) q.where({ 'g.state': f.state });
  if (f.service_name) q.where({ 'g.service_name': f.service_name });
  if (f.last_seen_after) q.where('g.last_seen_time', '>=', f.last_seen_after);
  if (f.last_seen_before) q.where('g.last_seen_time', '<', f.last_seen_before);
  whereSearch(q, envId, f.terms ?? []);
  sortedAfter(q, f.sort ?? 'last_seen', after);
  return q as unknown as Knex.QueryBuilder<GroupRow, GroupRow[]>;
}

/**
 * Occurrences per UTC day of the groups, from `days` days before `today`'s day up to it, from
 * their hourly counts (error_group_hours): at most 24 rows per group and day, never events.
 * Answers group id → counts, oldest day first (a group without any: all zeros).
 */
export async function dailyCounts(
  db: Db,
  envId: string,
  groupIds: string[],
  today: Date,
  days: number,
): Promise<Map<string, number[]>> {
  const start = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - days + 1));
  const counts = new Map(groupIds.map((id) => [id, new Array<number>(days).fill(0)]));
  if (groupIds.length === 0) return counts;
  const { rows } = await db.raw<{ rows: { group_id: string; day: number; n: number }[] }>(
    `select group_id, floor(extract(epoch from hour - ?::timestamptz) / 86400)::int as day, sum(count)::int as n
         from error_group_hours
        where env_id = ? and group_id = any(?::text[]) and hour >= ?::timestamptz and hour < ?::timestamptz + ? * interval '1 day'
        group by 1, 2`,
    [start, envId, groupIds, start, start, days],
  );
  for (const r of rows) counts.get(r.group_id)![r.day] = r.n;
  return counts;
}

export async function getGroup(db: Db, envId: string, id: string): Promise<GroupRow | undefined> {
  return db('error_groups').where({ env_id: envId, id }).first(groupColumns);
}

export async function listEvents(
  db: Db,
  envId: string,
  groupId: string,
  after: { t: string; id: string } | undefined,
  limit: number,
): Promise<EventRow[]> {
  const q = db('error_events')
    .where({ env_id: envId, group_id: groupId })
    .select(eventColumns)
    .orderBy([
      { column: 'event_time', order: 'desc' },
      { column: 'uid', order: 'desc' },
    ])
    .limit(limit);
  if (after) q.whereRaw('(event_time, uid) < (?::timestamptz, ?)', [after.t, after.id]);
  return (await q).map(eventRow);
}

/** One event by uid; with a group id it must be in that group (`-` reads across groups). */
export async function getEvent(
  db: Db,
  envId: string,
  groupId: string | undefined,
  uid: string,
): Promise<EventRow | undefined> {
  const q = db('error_events').where({ env_id: envId, uid });
  if (groupId !== undefined) q.where({ group_id: groupId });
  // An event is received after its uid was made (capture.ts): only partitions from that day on
  // are read. A minute's slack for clocks of several web processes.
  const made = ulidTime(uid.slice(6));
  if (made !== undefined) q.where('receive_time', '>=', new Date(made - 60_000));
  const row = await q.first(eventColumns);
  return row ? eventRow(row) : undefined;
}

/**
 * The uids of the events just newer and just older than one of the group's, in the order its
 * events list (event_time, then uid: several events may share a time), each one index read of
 * error_events_group_time_idx.
 */
export async function adjacentEvents(
  db: Db,
  envId: string,
  groupId: string,
  at: { event_time: Date; uid: string },
): Promise<{ newer: string | undefined; older: string | undefined }> {
  const next = (op: '>' | '<', order: 'asc' | 'desc') =>
    db('error_events')
      .where({ env_id: envId, group_id: groupId })
      .whereRaw(`(event_time, uid) ${op} (?::timestamptz, ?)`, [at.event_time, at.uid])
      .orderBy([
        { column: 'event_time', order },
        { column: 'uid', order },
      ])
      .first<{ uid: string } | undefined>('uid');
  const [newer, older] = await Promise.all([next('>', 'asc'), next('<', 'desc')]);
  return { newer: newer?.uid, older: older?.uid };
}

export async function triageGroup(
  db: Db,
  envId: string,
  id: string,
  etag: string,
  from: readonly GroupState[],
  to: GroupState,
): Promise<TriageOutcome> {
  const { rows } = await db.raw<{
    rows: { prior_state: GroupState; prior_etag: string; changed: GroupRow | null }[];
  }>(
    `with target as (select id, state, etag from error_groups where env_id = ? and id = ?),
       changed as (
         update error_groups g set state = ?, etag = ${newEtagSql}, update_time = now(),
           resolve_time = case when ? = 'resolved' then now() else null end
         from target where g.id = target.id and g.etag = ? and g.state = any(?::text[])
         returning ${groupColumns.map((c) => `g.${c}`).join(', ')}
       )
       select t.state as prior_state, t.etag as prior_etag, (select row_to_json(c) from changed c) as changed from target t`,
    [envId, id, to, to, etag, [...from]],
  );
  const row = rows[0];
  if (!row) return { found: false };
  const changed = row.changed
    ? {
        ...row.changed,
        first_seen_time: new Date(row.changed.first_seen_time),
        last_seen_time: new Date(row.changed.last_seen_time),
      }
    : undefined;
  return { found: true, prior: { state: row.prior_state, etag: row.prior_etag }, ...(changed ? { changed } : {}) };
}

/** Groups by id with their environment's name, on a job's transaction (webhook events: events.ts). */
export async function groupsWithEnvName(tx: SqlTx, ids: string[]): Promise<(GroupRow & { env_name: string })[]> {
  const { rows } = await tx.executeSql(
    `select g.*, v.name as env_name from error_groups g join envs v on v.id = g.env_id
     where g.id = any($1::text[]) order by g.id`,
    [ids],
  );
  return rows as (GroupRow & { env_name: string })[];
}
