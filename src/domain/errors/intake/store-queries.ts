// SQL of the worker's store: a processed batch, its groups' counts, hours, minutes and facets (tags,
// users, first release) in one statement, and the groups' user counts in a second on the same transaction.
// The batch travels as one JSON parameter, as in queries.ts.
import type { Db, SqlTx } from '../../../db.ts';
import { newEtagSql, type GroupRow } from '../groups/queries.ts';
import { reopenOnOccurrence as reopen } from '../groups/state.ts';
import type { EventUser } from '../pipeline/facets.ts';
import { tagUpsertSql, userUpsertSql, type FacetSource } from '../facets/upsert-sql.ts';

/** What a new group starts with: the batch's earliest occurrence of it. */
export type NewGroup = Pick<
  GroupRow,
  'id' | 'env_id' | 'fingerprint' | 'title' | 'culprit' | 'service_name' | 'etag' | 'grouping'
>;

/** An event as the store takes it; its user (`user_key`…, pipeline/facets.ts) when it names one. */
export interface NewEvent extends Partial<EventUser> {
  uid: string;
  env_id: string;
  fingerprint: string;
  event_time: string;
  receive_time: string;
  release: string;
  service_name: string;
  /** packBody(body) (event-codec.ts). */
  body_deflated: string;
  /** The client's name for it, if any: its claim (error_event_ids) is checked or made in the store. */
  event_id: string | null;
  /** Its tags as its group's facets count them (pipeline/facets.ts), read from the scrubbed event. */
  tags: [string, string][];
}

/** A group the store created, or reopened for a new occurrence (its webhook event: groups/events.ts). */
export interface ChangedGroup {
  id: string;
  env_id: string;
  created: boolean;
}

/**
 * Stores a processed batch (`eventsJson`: a JSON array of NewEvent) in one statement, on the
 * worker's transaction (`tx`), so it commits or vanishes as a whole, and only together with its
 * jobs' settlement (errors/queues.ts `transactional`).
 *
 * Exactly once: a job runs again only when its first run did not commit (a killed worker), so a
 * uid is stored by at most one committed run. Two runs of one job at once (a claim that ran out
 * while the first was still working) meet on the stored event's key: the later waits for the
 * earlier; whichever no longer holds the claim when it settles rolls back, store and all. The
 * `not exists` keeps a stored uid from being counted again by any later run regardless.
 * Group counts, their hours (error_group_hours, the console's charts), their minutes (alert rules'
 * windows, only in `minuteEnvs`) and their facets (tags, users, first release) are added from the same rows that are stored, so `occurrence_count`
 * always equals the stored events and a tag's count the stored events that carried it.
 *
 * A named event is stored only under the uid that holds its id's claim: claimed at acceptance
 * (capture), or here, by the first copy to be stored (Sentry's routes: capture.ts `ClaimAt`).
 * A copy under another uid is dropped (an SDK's retry). ON CONFLICT DO NOTHING waits for a
 * concurrent claim of the same id and skips it once committed: the statement's snapshot does
 * not show that claim, so the waiting copy is dropped, and is stored only if the other rolled
 * back. Of two copies in one batch, one claims and the other is dropped.
 *
 * Groups are created or locked in (env_id, fingerprint) order, then their tag and user rows in
 * (group_id, key) order (each insert sorts its rows first, so every group is locked before any of
 * them), so concurrent batches never deadlock; N workers seeing the first events of one new group
 * make exactly one group on its unique key. A resolved group reopens for a later occurrence
 * (groups/state.ts). The groups it created (xmax = 0: inserted, not updated) or reopened (stamped
 * with this transaction's id, exact even when another batch reopened the same group a moment
 * before) are answered for their webhook events, written on the same transaction.
 *
 * A tag's and a user's times are their events' receive times, as retention's are: a row outlives
 * its last event by nothing (retention/queries.ts). A user row keeps the latest id, email and
 * username its events gave. `first_release` is the release of the group's earliest event (by
 * event_time, then uid): set with the group, and replaced only by a batch holding an earlier one.
 */
export async function storeEvents(
  db: Db,
  tx: SqlTx,
  eventsJson: string,
  groups: NewGroup[],
  minuteEnvs: readonly string[] = [],
): Promise<StoreResult> {
  const { rows } = await tx.executeSql(
    storeSql,
    // The reopen's states come from the state table (groups/state.ts).
    [eventsJson, JSON.stringify(groups), reopen.from, reopen.to, minuteEnvs],
  );
  const row = (
    rows as {
      stored: string;
      changed: ChangedGroup[] | null;
      new_users: NewUsers | null;
      minute_groups: string[] | null;
    }[]
  )[0];
  if (row?.new_users) await addUserCounts(tx, row.new_users);
  return { stored: Number(row?.stored ?? 0), changed: row?.changed ?? [], minuteGroups: row?.minute_groups ?? [] };
}

export interface StoreResult {
  stored: number;
  changed: ChangedGroup[];
  /** The groups whose per-minute counts (alert_group_minutes) the batch added to. */
  minuteGroups: string[];
}

/** The store's rows: `mg`, each with the id of its group (created or locked by `g`). */
const stored: FacetSource = { from: 'mg m', group: 'm.group_id' };

/**
 * The tag and user upserts of the store, over `stored`. Each event's tags count once per
 * (key, value); its user once per user key.
 */
const facetsSql = `tag_rows as (${tagUpsertSql(stored)}
       ),
       users as (${userUpsertSql(stored)}
       )`;

/**
 * The store's statement (storeEvents): $1 the events, $2 their new groups, $3/$4 the reopen's
 * states, $5 the environments whose groups keep per-minute counts (those with an enabled frequency
 * rule: domain/alerts/fire/). The minutes are added from the same rows as the hours, in
 * (group_id, minute) order, so concurrent batches never deadlock on them, and a frequency rule
 * counts exactly the stored events (a named event's dropped copy is not in `mine`).
 */
export const storeSql = `with ev as (
         select * from jsonb_to_recordset($1::jsonb) as x(uid text, env_id text, fingerprint text, event_time timestamptz,
           receive_time timestamptz, release text, service_name text, body_deflated text, event_id text,
           tags jsonb, user_key text, user_id text, email text, username text)
       ),
       claimed as (
         insert into error_event_ids (env_id, event_id, uid)
         select env_id, event_id, uid from ev where event_id is not null
         on conflict (env_id, event_id) do nothing
         returning uid
       ),
       mine as (
         select ev.* from ev where not exists (
           select 1 from error_events e where e.uid = ev.uid and e.receive_time = ev.receive_time
         ) and (
           ev.event_id is null
           or exists (select 1 from claimed c where c.uid = ev.uid)
           or exists (select 1 from error_event_ids i where i.env_id = ev.env_id and i.event_id = ev.event_id and i.uid = ev.uid)
         )
       ),
       counts as (
         select env_id, fingerprint, count(*) as n, min(event_time) as first, max(event_time) as last,
           (array_agg(release order by event_time desc, uid desc))[1] as last_release,
           (array_agg(release order by event_time, uid))[1] as first_release
         from mine group by env_id, fingerprint
       ),
       g as (
         insert into error_groups as eg (id, env_id, fingerprint, title, culprit, service_name, etag, grouping,
           first_seen_time, last_seen_time, occurrence_count, last_release, first_release)
         select n.id, n.env_id, n.fingerprint, n.title, n.culprit, n.service_name, n.etag, n.grouping,
           c.first, c.last, c.n, c.last_release, c.first_release
         from counts c join jsonb_to_recordset($2::jsonb) as n(id text, env_id text, fingerprint text, title text, culprit text,
           service_name text, etag text, grouping jsonb) using (env_id, fingerprint)
         order by c.env_id, c.fingerprint
         on conflict (env_id, fingerprint) do update set
           occurrence_count = eg.occurrence_count + excluded.occurrence_count,
           first_seen_time = least(eg.first_seen_time, excluded.first_seen_time),
           last_seen_time = greatest(eg.last_seen_time, excluded.last_seen_time),
           last_release = case when excluded.last_seen_time >= eg.last_seen_time then excluded.last_release else eg.last_release end,
           first_release = case when excluded.first_seen_time < eg.first_seen_time then excluded.first_release else eg.first_release end,
           state = case when eg.state = $3 and excluded.last_seen_time > eg.resolve_time then $4 else eg.state end,
           etag = case when eg.state = $3 and excluded.last_seen_time > eg.resolve_time then ${newEtagSql} else eg.etag end,
           resolve_time = case when eg.state = $3 and excluded.last_seen_time > eg.resolve_time then null else eg.resolve_time end,
           reopen_xact = case when eg.state = $3 and excluded.last_seen_time > eg.resolve_time then pg_current_xact_id() else eg.reopen_xact end,
           update_time = now()
         returning eg.id, eg.env_id, eg.fingerprint, (eg.xmax = 0) as created,
           eg.reopen_xact is not distinct from pg_current_xact_id() as reopened
       ),
       -- Each stored row with its group's id, looked up in one map of the batch's groups. A join of
       -- mine with g in each insert below was planned as a nested loop (both CTEs are estimated at
       -- one row), comparing every event with every group: quadratic in the batch, five times over.
       gids as (select jsonb_object_agg(env_id || ' ' || fingerprint, id) as ids from g),
       mg as (
         select * from (
           select m.*, (select ids from gids) ->> (m.env_id || ' ' || m.fingerprint) as group_id from mine m
         ) x where group_id is not null
       ),
       hours as (
         insert into error_group_hours as h (group_id, env_id, hour, count)
         select m.group_id, m.env_id, date_trunc('hour', m.receive_time, 'UTC'), count(*)
         from mg m
         group by 1, 2, 3 order by 1, 3
         on conflict (group_id, hour) do update set count = h.count + excluded.count
       ),
       minutes as (
         insert into alert_group_minutes as am (group_id, env_id, minute, count)
         select m.group_id, m.env_id, date_trunc('minute', m.receive_time, 'UTC'), count(*)
         from mg m
         where m.env_id = any($5::text[])
         group by 1, 2, 3 order by 1, 3
         on conflict (group_id, minute) do update set count = am.count + excluded.count
         returning am.group_id
       ),
       ${facetsSql},
       stored as (
         insert into error_events (uid, env_id, group_id, event_time, receive_time, release, service_name, body_deflated, facets_kept)
         select m.uid, m.env_id, m.group_id, m.event_time, m.receive_time, m.release, m.service_name, decode(m.body_deflated, 'base64'), true
         from mg m
         on conflict (uid, receive_time) do nothing
         returning uid
       )
       select (select count(*) from stored) as stored,
         (select json_agg(json_build_object('id', id, 'env_id', env_id, 'created', created))
          from g where created or reopened) as changed,
         (select json_agg(json_build_object('id', group_id, 'n', n)) from
           (select group_id, count(*) as n from users where created group by group_id) u) as new_users,
         (select json_agg(distinct group_id) from minutes) as minute_groups`;

/** Groups and how many user rows were inserted for them (not updated: a new user key). */
export type NewUsers = { id: string; n: number }[];

/**
 * Adds new user rows to their groups' `user_count`, on the store's transaction. A second
 * statement: one statement cannot update a group row twice (the store's upsert has), and a
 * user row's insertion is known only from its upsert, which the unique key arbitrates between
 * concurrent batches (a count read from the table would miss a concurrent batch's new user). The
 * groups are this transaction's already (the store locked them), so it waits for no one.
 */
export async function addUserCounts(tx: SqlTx, added: NewUsers): Promise<void> {
  await tx.executeSql(
    `update error_groups g set user_count = g.user_count + d.n
       from jsonb_to_recordset($1::jsonb) as d(id text, n int) where g.id = d.id`,
    [JSON.stringify(added)],
  );
}
