// SQL for captures and their storage. Bulk statements take their rows as one JSON parameter, so a
// batch of 100 or 1000 is one round trip with every value bound, through jsonb_to_recordset (the
// batch is parsed once). Stored bodies travel deflated, as base64 text, and are stored as bytea
// (event-codec.ts): Postgres never parses or compresses a body. Captured payloads wait for the
// workers sealed, in `errors.ingest` jobs (job.ts), never in a table of ours.
import type { Db, SqlTx } from '../../../db.ts';
import type { SealedPayloadRow } from './sealed-payload.ts';
import { newEtagSql, type GroupRow } from '../groups/queries.ts';
import { reopenOnOccurrence as reopen } from '../groups/state.ts';
import { defaultErrorSettings } from '../retention/queries.ts';

/**
 * An accepted event; `event_id`, the client's name for it (an id of its own choosing, not a secret)
 * when it is claimed before the answer (capture.ts `ClaimAt`), else none.
 */
export type AcceptedRow = SealedPayloadRow & { event_id?: string | null };

/** What a new group starts with: the batch's earliest occurrence of it. */
export type NewGroup = Pick<
  GroupRow,
  'id' | 'env_id' | 'fingerprint' | 'title' | 'culprit' | 'service_name' | 'etag' | 'grouping'
>;

export interface NewEvent {
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
}

/** How many events of each environment to add to (or, negative, take from) its pending count. */
export type PendingDeltas = Map<string, number>;

/**
 * Claims the named events' ids (in the caller's transaction, which then queues the winners'
 * jobs): an id already claimed, or claimed twice in this batch, is not the caller's to queue.
 * ON CONFLICT DO NOTHING waits for a concurrent claim of the same id to commit or roll back, so
 * exactly one wins. Answers `env_id\nevent_id` → the uid each named event was accepted with.
 */
export async function claimEventIds(tx: SqlTx, rows: AcceptedRow[]): Promise<Map<string, string>> {
  const named = rows.filter((r) => r.event_id).map((r) => ({ env_id: r.env_id, event_id: r.event_id, uid: r.uid }));
  type Claim = { env_id: string; event_id: string; uid: string };
  const { rows: claimed } = (await tx.executeSql(
    `insert into error_event_ids (env_id, event_id, uid)
     select env_id, event_id, uid from jsonb_to_recordset($1::jsonb) as x(env_id text, event_id text, uid text)
     on conflict (env_id, event_id) do nothing
     returning env_id, event_id, uid`,
    [JSON.stringify(named)],
  )) as { rows: Claim[] };
  const winners = new Map(claimed.map((c) => [`${c.env_id}\n${c.event_id}`, c.uid]));
  const lost = named.filter((r) => winners.get(`${r.env_id}\n${r.event_id}`) !== r.uid);
  if (lost.length > 0) {
    // Accepted before (or by a concurrent request, now committed): answer with that uid.
    const { rows: earlier } = (await tx.executeSql(
      `select i.env_id, i.event_id, i.uid from error_event_ids i
         join jsonb_to_recordset($1::jsonb) as x(env_id text, event_id text) on i.env_id = x.env_id and i.event_id = x.event_id`,
      [JSON.stringify(lost.map((r) => ({ env_id: r.env_id, event_id: r.event_id })))],
    )) as { rows: Claim[] };
    for (const e of earlier) winners.set(`${e.env_id}\n${e.event_id}`, e.uid);
  }
  return winners;
}

/**
 * Moves environments' pending counts, on the caller's transaction and as its last statement, so
 * the counter row is locked only for the commit. Rows are taken in env_id order, so two
 * transactions moving several environments never deadlock.
 *
 * Deltas add up as they are, never clamped: a web process adds its commits' events a tenth of a
 * second after them (writer.ts PendingCounts), and an idle worker may store and subtract them
 * first. Clamped at zero, that subtraction was lost and the later addition stayed for good (500
 * phantom events after a run); unclamped, the count is briefly below zero and then exact, in
 * whatever order the two land. Readers take a negative count as none (`backlog`, the operator's
 * view). An operator's redrive of dead letters (their events were counted out when buried) leaves
 * the count that many below what waits until the next reconcile, every 5 minutes (`reconcilePending`).
 */
export async function bumpPending(tx: SqlTx, deltas: PendingDeltas): Promise<void> {
  const entries = [...deltas].filter(([, n]) => n !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return;
  await tx.executeSql(
    `insert into error_intake_pending as p (env_id, pending)
     select env_id, n from unnest($1::text[], $2::bigint[]) with ordinality as d(env_id, n, i)
      where exists (select 1 from envs e where e.id = d.env_id) order by i
     on conflict (env_id) do update set pending = p.pending + excluded.pending`,
    [entries.map(([env]) => env), entries.map(([, n]) => n)],
  );
}

/**
 * Sets every environment's pending count to the events its queued `errors.ingest` jobs hold
 * now: counts a web process died before adding, or an operator's redrive of dead letters, are
 * put right. Counts added meanwhile for commits before this snapshot may count twice, until
 * the next time: the bound is soft either way.
 *
 * The rows are locked first, in a statement of their own: a worker storing a job decrements its
 * row in the job's transaction, and a count taken before that commit, written after it, would
 * undo the decrement (the count stayed 1 above what waits). Under the lock, the count's
 * statement takes its snapshot after every such commit (READ COMMITTED), and a job stored later
 * is counted and then decremented.
 */
export async function reconcilePending(db: Db): Promise<number> {
  return db.transaction(async (trx) => {
    await trx.raw('select 1 from error_intake_pending order by env_id for update');
    const result = await trx.raw(
      `insert into error_intake_pending as p (env_id, pending)
       select e.id, coalesce(c.n, 0) from envs e
         left join (
           select ev->>'env_id' as env_id, count(*) as n
             from pgboss.job j, jsonb_array_elements(j.data->'events') ev
            where j.name = 'errors.ingest' and j.state in ('created', 'retry', 'active')
            group by 1
         ) c on c.env_id = e.id
        where c.n is not null or exists (select 1 from error_intake_pending x where x.env_id = e.id)
        order by e.id
       on conflict (env_id) do update set pending = excluded.pending
       where p.pending is distinct from excluded.pending`,
    );
    return result.rowCount ?? 0;
  });
}

/** The intake's table (pg-boss's partition of `errors.ingest`) and its dead tuples, as the statistics have them. */
export async function intakeGarbage(
  db: Db,
): Promise<{ table: string; dead_jobs: number; last_autovacuum: Date | null }> {
  const { rows } = await db.raw<{
    rows: { table_name: string; dead: string | null; last_autovacuum: Date | null }[];
  }>(
    `select q.table_name, s.n_dead_tup as dead, s.last_autovacuum
         from pgboss.queue q
         left join pg_stat_user_tables s on s.schemaname = 'pgboss' and s.relname = q.table_name
        where q.name = 'errors.ingest'`,
  );
  const r = rows[0]!;
  return { table: r.table_name, dead_jobs: Number(r.dead ?? 0), last_autovacuum: r.last_autovacuum };
}

/** VACUUM (outside any transaction: it refuses to run in one). */
export async function vacuumTable(db: Db, table: string): Promise<void> {
  await db.raw('vacuum (analyze) ??', [`pgboss.${table}`]);
}

/** An environment's pending events and its bound (error_settings, else the default). */
export async function intakeBacklog(db: Db, envId: string): Promise<{ pending: number; max_pending: number }> {
  const { rows } = await db.raw<{ rows: { pending: string; max_pending: string }[] }>(
    `select greatest(coalesce((select pending from error_intake_pending where env_id = ?), 0), 0) as pending,
              coalesce((select max_pending from error_settings where env_id = ?), ?) as max_pending`,
    [envId, envId, defaultErrorSettings.max_pending],
  );
  return { pending: Number(rows[0]!.pending), max_pending: Number(rows[0]!.max_pending) };
}

/** The uid an event named `eventId` (a Sentry SDK's id) was accepted with in the environment. */
export async function uidOfEventId(db: Db, envId: string, eventId: string): Promise<string | undefined> {
  const row = await db('error_event_ids').where({ env_id: envId, event_id: eventId }).first('uid');
  return (row as { uid: string } | undefined)?.uid;
}

/** Event ids accepted before `before`: their retention is over. */
export async function deleteEventIds(db: Db, before: Date, limit: number): Promise<number> {
  const result = await db.raw(
    'delete from error_event_ids where ctid in (select ctid from error_event_ids where accept_time < ? limit ?)',
    [before, limit],
  );
  return result.rowCount ?? 0;
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
 * Group counts, and their hours (error_group_hours, the console's charts), are added from the
 * same rows that are stored, so `occurrence_count` always equals the stored events.
 *
 * A named event is stored only under the uid that holds its id's claim: claimed at acceptance
 * (capture), or here, by the first copy to be stored (Sentry's routes: capture.ts `ClaimAt`).
 * A copy under another uid is dropped (an SDK's retry). ON CONFLICT DO NOTHING waits for a
 * concurrent claim of the same id and skips it once committed: the statement's snapshot does
 * not show that claim, so the waiting copy is dropped, and is stored only if the other rolled
 * back. Of two copies in one batch, one claims and the other is dropped.
 *
 * Groups are created or locked in (env_id, fingerprint) order, so concurrent batches never
 * deadlock; N workers seeing the first events of one new group meet on its unique key and
 * make exactly one group. A resolved group reopens for a later occurrence (groups/state.ts).
 * The groups it created (xmax = 0: inserted, not updated) or reopened (stamped with this
 * transaction's id, exact even when another batch reopened the same group a moment before)
 * are answered for their webhook events, written on the same transaction.
 */
export async function storeEvents(
  db: Db,
  tx: SqlTx,
  eventsJson: string,
  groups: NewGroup[],
): Promise<{ stored: number; changed: ChangedGroup[] }> {
  const { rows } = await tx.executeSql(
    `with ev as (
         select * from jsonb_to_recordset($1::jsonb) as x(uid text, env_id text, fingerprint text, event_time timestamptz,
           receive_time timestamptz, release text, service_name text, body_deflated text, event_id text)
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
           (array_agg(release order by event_time desc, uid desc))[1] as last_release
         from mine group by env_id, fingerprint
       ),
       g as (
         insert into error_groups as eg (id, env_id, fingerprint, title, culprit, service_name, etag, grouping,
           first_seen_time, last_seen_time, occurrence_count, last_release)
         select n.id, n.env_id, n.fingerprint, n.title, n.culprit, n.service_name, n.etag, n.grouping,
           c.first, c.last, c.n, c.last_release
         from counts c join jsonb_to_recordset($2::jsonb) as n(id text, env_id text, fingerprint text, title text, culprit text,
           service_name text, etag text, grouping jsonb) using (env_id, fingerprint)
         order by c.env_id, c.fingerprint
         on conflict (env_id, fingerprint) do update set
           occurrence_count = eg.occurrence_count + excluded.occurrence_count,
           first_seen_time = least(eg.first_seen_time, excluded.first_seen_time),
           last_seen_time = greatest(eg.last_seen_time, excluded.last_seen_time),
           last_release = case when excluded.last_seen_time >= eg.last_seen_time then excluded.last_release else eg.last_release end,
           state = case when eg.state = $3 and excluded.last_seen_time > eg.resolve_time then $4 else eg.state end,
           etag = case when eg.state = $3 and excluded.last_seen_time > eg.resolve_time then ${newEtagSql} else eg.etag end,
           resolve_time = case when eg.state = $3 and excluded.last_seen_time > eg.resolve_time then null else eg.resolve_time end,
           reopen_xact = case when eg.state = $3 and excluded.last_seen_time > eg.resolve_time then pg_current_xact_id() else eg.reopen_xact end,
           update_time = now()
         returning eg.id, eg.env_id, eg.fingerprint, (eg.xmax = 0) as created,
           eg.reopen_xact is not distinct from pg_current_xact_id() as reopened
       ),
       hours as (
         insert into error_group_hours as h (group_id, env_id, hour, count)
         select g.id, m.env_id, date_trunc('hour', m.receive_time, 'UTC'), count(*)
         from mine m join g using (env_id, fingerprint)
         group by 1, 2, 3 order by 1, 3
         on conflict (group_id, hour) do update set count = h.count + excluded.count
       ),
       stored as (
         insert into error_events (uid, env_id, group_id, event_time, receive_time, release, service_name, body_deflated)
         select m.uid, m.env_id, g.id, m.event_time, m.receive_time, m.release, m.service_name, decode(m.body_deflated, 'base64')
         from mine m join g using (env_id, fingerprint)
         on conflict (uid, receive_time) do nothing
         returning uid
       )
       select (select count(*) from stored) as stored,
         (select json_agg(json_build_object('id', id, 'env_id', env_id, 'created', created))
          from g where created or reopened) as changed`,
    // The reopen's states come from the state table (groups/state.ts).
    [eventsJson, JSON.stringify(groups), reopen.from, reopen.to],
  );
  const row = (rows as { stored: string; changed: ChangedGroup[] | null }[])[0];
  return { stored: Number(row?.stored ?? 0), changed: row?.changed ?? [] };
}

/** A group the store created, or reopened for a new occurrence (its webhook event: groups/events.ts). */
export interface ChangedGroup {
  id: string;
  env_id: string;
  created: boolean;
}
