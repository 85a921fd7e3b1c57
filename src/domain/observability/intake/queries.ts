// SQL for captures and their storage. Bulk statements take their rows as one JSON parameter, so a
// batch of 100 or 1000 is one round trip with every value bound, through jsonb_to_recordset (the
// batch is parsed once). Stored bodies travel deflated, as base64 text, and are stored as bytea
// (event-body.ts): Postgres never parses or compresses a body.
// Captured payloads are sealed (sealed-payload.ts) in the inbox and the dead letters alike.
import type { Db } from '../../../db.ts';
import type { SealedPayloadRow } from './sealed-payload.ts';
import { reopenOnOccurrence as reopen } from '../groups/state.ts';

/**
 * A claimed row. Its payload stays sealed until its turn comes (ingest.ts): a batch's payloads as
 * objects would outlive the young generation and fill the worker's old one, and a batch is never
 * held in plaintext.
 */
export interface InboxRow extends SealedPayloadRow {
  receive_time: Date;
  /** Claims so far, this one included. */
  attempts: number;
}

/** An inbox row, with the client's name for the event when it gave one (an id of its own choosing, not a secret). */
export type InboxInsert = SealedPayloadRow & { event_id?: string | null };

/** What a new group starts with: the batch's earliest occurrence of it. */
export interface NewGroup {
  id: string;
  env_id: string;
  fingerprint: string;
  title: string;
  culprit: string;
  service_name: string;
  etag: string;
  grouping: unknown;
}

export interface NewEvent {
  uid: string;
  env_id: string;
  fingerprint: string;
  event_time: string;
  receive_time: string;
  release: string;
  service_name: string;
  /** packBody(body) (event-body.ts). */
  body_deflated: string;
}

/** A fresh, opaque etag, made in SQL so the state check and the change stay one statement. */
export const newEtagSql = `substr(md5(random()::text || clock_timestamp()::text), 1, 16)`;

const inboxColumns = (t: string) =>
  `${t}.uid, ${t}.env_id, ${t}.receive_time, ${t}.payload_sealed, ${t}.release, ${t}.attempts`;

export function ingestQueries(db: Db) {
  return {
    /**
     * One statement, no transaction: the row is the event's whole acceptance (its trigger wakes the
     * workers). jsonb_to_recordset beat unnest of text arrays here (measured 17-19k against 16k
     * sealed events/s): parsing one JSON document of short strings costs Postgres less than array
     * literals, and text beat bytea, which the driver would send as hex, twice the bytes.
     */
    async insertInbox(rows: InboxInsert[]): Promise<Map<string, string>> {
      if (!rows.some((r) => r.event_id)) {
        await db.raw(
          `insert into error_event_inbox (uid, env_id, release, payload_sealed)
           select x.uid, x.env_id, x.release, x.payload_sealed
           from jsonb_to_recordset(?::jsonb) as x(uid text, env_id text, release text, payload_sealed text)`,
          [JSON.stringify(rows)],
        );
        return new Map();
      }
      // Named events: each id is claimed and its inbox row written in the same statement (a
      // data-modifying WITH runs to completion whether or not it is read); an id already claimed,
      // or claimed twice in this batch, writes no row. ON CONFLICT DO NOTHING waits for a
      // concurrent claim of the same id to commit or roll back, so exactly one wins.
      const { rows: claimed } = await db.raw<{ rows: { env_id: string; event_id: string; uid: string }[] }>(
        `with input as (
           select * from jsonb_to_recordset(?::jsonb) as x(uid text, env_id text, release text, payload_sealed text, event_id text)
         ), claimed as (
           insert into error_event_ids (env_id, event_id, uid)
           select env_id, event_id, uid from input where event_id is not null
           on conflict (env_id, event_id) do nothing
           returning env_id, event_id, uid
         ), written as (
           insert into error_event_inbox (uid, env_id, release, payload_sealed)
           select i.uid, i.env_id, i.release, i.payload_sealed from input i
            where i.event_id is null or i.uid in (select uid from claimed)
           returning 1
         )
         select env_id, event_id, uid from claimed`,
        [JSON.stringify(rows)],
      );
      const winners = new Map(claimed.map((c) => [`${c.env_id}\n${c.event_id}`, c.uid]));
      const lost = rows.filter((r) => r.event_id && !winners.has(`${r.env_id}\n${r.event_id}`));
      if (lost.length > 0) {
        // Accepted before (or by a concurrent request, now committed): answer with that uid.
        const { rows: earlier } = await db.raw<{ rows: { env_id: string; event_id: string; uid: string }[] }>(
          `select i.env_id, i.event_id, i.uid from error_event_ids i
             join jsonb_to_recordset(?::jsonb) as x(env_id text, event_id text) on i.env_id = x.env_id and i.event_id = x.event_id`,
          [JSON.stringify(lost.map((r) => ({ env_id: r.env_id, event_id: r.event_id })))],
        );
        for (const e of earlier) winners.set(`${e.env_id}\n${e.event_id}`, e.uid);
      }
      return winners;
    },

    /** Event ids accepted before `before`: their retention is over. */
    async pruneEventIds(before: Date, limit: number): Promise<number> {
      const result = await db.raw(
        'delete from error_event_ids where ctid in (select ctid from error_event_ids where accept_time < ? limit ?)',
        [before, limit],
      );
      return result.rowCount ?? 0;
    },

    /**
     * Leases up to `limit` claimable rows, oldest first, for `leaseSeconds`, counting the attempt,
     * and no more rows than fit in `maxBytes` of stored (deflated, sealed) payload, though always one:
     * a batch of large events must not take more memory than a batch of ordinary ones. SKIP LOCKED
     * lets concurrent claimers take disjoint rows without waiting on each other.
     */
    async claim(limit: number, leaseSeconds: number, maxBytes = 2 * 1024 * 1024): Promise<InboxRow[]> {
      const { rows } = await db.raw<{ rows: InboxRow[] }>(
        `with candidates as (
           select uid, pg_column_size(payload_sealed) as size from error_event_inbox
           where lease_until is null or lease_until <= now()
           order by uid limit ? for update skip locked
         ),
         fitting as (
           select uid from (select uid, sum(size) over (order by uid) as running, row_number() over (order by uid) as n from candidates) c
           where c.running <= ? or c.n = 1
         )
         update error_event_inbox i set lease_until = now() + make_interval(secs => ?), attempts = i.attempts + 1
         from fitting f where i.uid = f.uid
         returning ${inboxColumns('i')}`,
        [limit, maxBytes, leaseSeconds],
      );
      return rows.sort((a, b) => (a.uid < b.uid ? -1 : 1));
    },

    /** Inbox rows by uid, without leasing them (tests and re-runs). */
    async inbox(uids: string[]): Promise<InboxRow[]> {
      return db('error_event_inbox as i')
        .whereIn('uid', uids)
        .orderBy('uid')
        .select(db.raw(inboxColumns('i')));
    },

    /**
     * Stores a processed batch (`eventsJson`: a JSON array of NewEvent) in one statement, so it
     * commits or vanishes as a whole.
     *
     * Exactly once: the statement deletes the events' inbox rows first (locking them in uid order,
     * so two statements never deadlock on them) and goes on only with the rows it really deleted,
     * less any uid already stored. Two workers holding the same event (a lease that ran out) meet
     * on the inbox row: the second waits for the first, then finds the row gone and stores
     * nothing. Group counts are added from those same rows, so `occurrence_count` always equals
     * the stored events.
     *
     * Groups are created or locked in (env_id, fingerprint) order, so concurrent batches never
     * deadlock; N workers seeing the first events of one new group meet on its unique key and
     * make exactly one group. A resolved group reopens for a later occurrence (groups/state.ts).
     */
    async store(eventsJson: string, groups: NewGroup[]): Promise<number> {
      const { rows } = await db.raw<{ rows: { stored: string }[] }>(
        `with ev as (
           select * from jsonb_to_recordset(?::jsonb) as x(uid text, env_id text, fingerprint text, event_time timestamptz,
             receive_time timestamptz, release text, service_name text, body_deflated text)
         ),
         locked as (
           select i.uid from error_event_inbox i where i.uid in (select uid from ev) order by i.uid for update
         ),
         taken as (
           delete from error_event_inbox i using locked l where i.uid = l.uid returning i.uid
         ),
         mine as (
           select ev.* from ev join taken using (uid)
           where not exists (select 1 from error_events e where e.uid = ev.uid)
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
           from counts c join jsonb_to_recordset(?::jsonb) as n(id text, env_id text, fingerprint text, title text, culprit text,
             service_name text, etag text, grouping jsonb) using (env_id, fingerprint)
           order by c.env_id, c.fingerprint
           on conflict (env_id, fingerprint) do update set
             occurrence_count = eg.occurrence_count + excluded.occurrence_count,
             first_seen_time = least(eg.first_seen_time, excluded.first_seen_time),
             last_seen_time = greatest(eg.last_seen_time, excluded.last_seen_time),
             last_release = case when excluded.last_seen_time >= eg.last_seen_time then excluded.last_release else eg.last_release end,
             state = case when eg.state = ? and excluded.last_seen_time > eg.resolve_time then ? else eg.state end,
             etag = case when eg.state = ? and excluded.last_seen_time > eg.resolve_time then ${newEtagSql} else eg.etag end,
             resolve_time = case when eg.state = ? and excluded.last_seen_time > eg.resolve_time then null else eg.resolve_time end,
             update_time = now()
           returning eg.id, eg.env_id, eg.fingerprint
         ),
         stored as (
           insert into error_events (uid, env_id, group_id, event_time, receive_time, release, service_name, body_deflated)
           select m.uid, m.env_id, g.id, m.event_time, m.receive_time, m.release, m.service_name, decode(m.body_deflated, 'base64')
           from mine m join g using (env_id, fingerprint)
           on conflict (uid) do nothing
           returning uid
         )
         select count(*) as stored from stored`,
        // The reopen's states come from the state table (groups/state.ts), in the order they appear above.
        [eventsJson, JSON.stringify(groups), reopen.from, reopen.to, reopen.from, reopen.from],
      );
      return Number(rows[0]?.stored ?? 0);
    },

    /**
     * Events whose processing threw: each waits out a backoff (1 s, doubling, at most 5 min) and
     * is claimed again; after `maxAttempts` it moves to error_event_dead with its last error. The
     * payload moves as it is, sealed: burying an event never opens it.
     */
    async release(failed: { uid: string; attempts: number; error: string }[], maxAttempts: number): Promise<void> {
      if (failed.length === 0) return;
      await db.raw(
        `with f as (select * from json_to_recordset(?::json) as x(uid text, attempts int, error text)),
         dead as (
           delete from error_event_inbox i using f where i.uid = f.uid and f.attempts >= ?
           returning i.uid, i.env_id, i.receive_time, i.attempts, i.release, i.payload_sealed, f.error
         ),
         buried as (
           insert into error_event_dead (uid, env_id, receive_time, attempts, last_error, release, payload_sealed)
           select uid, env_id, receive_time, attempts, error, release, payload_sealed from dead on conflict (uid) do nothing
         )
         update error_event_inbox i set last_error = f.error,
           lease_until = now() + make_interval(secs => least(300, power(2, greatest(f.attempts - 1, 0)))::int)
         from f where i.uid = f.uid and f.attempts < ?`,
        [JSON.stringify(failed), maxAttempts, maxAttempts],
      );
    },

    /**
     * Deletes up to `limit` dead letters buried before `before`, oldest first (by the dead_time
     * index); answers how many. Small statements: a flood of dead letters never holds one long lock.
     */
    async pruneDead(before: Date, limit: number): Promise<number> {
      const { rowCount } = await db.raw<{ rowCount: number }>(
        `delete from error_event_dead where uid in (
           select uid from error_event_dead where dead_time < ? order by dead_time limit ?
         )`,
        [before, limit],
      );
      return rowCount ?? 0;
    },
  };
}
