// SQL for captures and their storage. Bulk statements take their rows as one jsonb parameter
// (jsonb_to_recordset), so a batch of 100 or 1000 is one round trip with every value bound.
import type { Db } from '../../db.ts';
import type { ErrorEventInput } from './event-schema.ts';
import type { EventBody } from './process.ts';

export interface InboxRow {
  uid: string;
  env_id: string;
  receive_time: Date;
  payload: ErrorEventInput;
}

export interface NewGroup {
  id: string;
  env_id: string;
  fingerprint: string;
  title: string;
  culprit: string;
  service_name: string;
  etag: string;
  first_seen_time: string;
  grouping: unknown;
}

export interface NewEvent {
  uid: string;
  env_id: string;
  group_id: string;
  event_time: string;
  receive_time: string;
  release: string;
  service_name: string;
  body: EventBody;
}

export interface GroupBump {
  id: string;
  n: number;
  first: string;
  last: string;
  last_release: string;
}

/** A fresh, opaque etag, made in SQL so the state check and the change stay one statement. */
export const newEtagSql = `substr(md5(random()::text || clock_timestamp()::text), 1, 16)`;

export function ingestQueries(db: Db) {
  return {
    async insertInbox(rows: { uid: string; env_id: string; payload: ErrorEventInput }[]): Promise<void> {
      await db.raw(
        `insert into error_event_inbox (uid, env_id, payload)
         select x.uid, x.env_id, x.payload from jsonb_to_recordset(?::jsonb) as x(uid text, env_id text, payload jsonb)`,
        [JSON.stringify(rows)],
      );
    },

    async inbox(uids: string[]): Promise<InboxRow[]> {
      return db('error_event_inbox').whereIn('uid', uids).select('uid', 'env_id', 'receive_time', 'payload');
    },

    async deleteInbox(uids: string[]): Promise<void> {
      await db('error_event_inbox').whereIn('uid', uids).delete();
    },

    /**
     * Creates the groups that do not exist and locks every group of the batch, in fingerprint
     * order so concurrent batches never deadlock. N workers seeing the first events of one new
     * group meet on the unique (env_id, fingerprint) key and make exactly one group.
     */
    async upsertGroups(groups: NewGroup[]): Promise<Map<string, string>> {
      const { rows } = await db.raw<{ rows: { id: string; env_id: string; fingerprint: string }[] }>(
        `insert into error_groups (id, env_id, fingerprint, title, culprit, service_name, etag, first_seen_time, last_seen_time, grouping)
         select x.id, x.env_id, x.fingerprint, x.title, x.culprit, x.service_name, x.etag, x.first_seen_time, x.first_seen_time, x.grouping
         from jsonb_to_recordset(?::jsonb) as x(id text, env_id text, fingerprint text, title text, culprit text,
           service_name text, etag text, first_seen_time timestamptz, grouping jsonb)
         order by x.env_id, x.fingerprint
         on conflict (env_id, fingerprint) do update set update_time = error_groups.update_time
         returning id, env_id, fingerprint`,
        [JSON.stringify(groups)],
      );
      return new Map(rows.map((r) => [`${r.env_id}/${r.fingerprint}`, r.id]));
    },

    /** Inserts the events not stored yet; answers the uids it stored (a re-run stores none). */
    async insertEvents(events: NewEvent[]): Promise<Set<string>> {
      const { rows } = await db.raw<{ rows: { uid: string }[] }>(
        `insert into error_events (uid, env_id, group_id, event_time, receive_time, release, service_name, body)
         select x.uid, x.env_id, x.group_id, x.event_time, x.receive_time, x.release, x.service_name, x.body
         from jsonb_to_recordset(?::jsonb) as x(uid text, env_id text, group_id text, event_time timestamptz,
           receive_time timestamptz, release text, service_name text, body jsonb)
         on conflict (uid) do nothing
         returning uid`,
        [JSON.stringify(events)],
      );
      return new Set(rows.map((r) => r.uid));
    },

    /**
     * Counts stored events into their groups. A resolved group reopens only for an occurrence
     * that happened after the resolve (getsentry/sentry#30371: late events of a fixed bug must not
     * reopen it); the reopen is a state change, so the etag changes with it.
     */
    async bumpGroups(bumps: GroupBump[]): Promise<void> {
      await db.raw(
        `update error_groups g set
           occurrence_count = g.occurrence_count + x.n,
           first_seen_time = least(g.first_seen_time, x.first),
           last_seen_time = greatest(g.last_seen_time, x.last),
           last_release = case when x.last >= g.last_seen_time then x.last_release else g.last_release end,
           state = case when g.state = 'resolved' and x.last > g.resolve_time then 'unresolved' else g.state end,
           etag = case when g.state = 'resolved' and x.last > g.resolve_time then ${newEtagSql} else g.etag end,
           resolve_time = case when g.state = 'resolved' and x.last > g.resolve_time then null else g.resolve_time end,
           update_time = now()
         from jsonb_to_recordset(?::jsonb) as x(id text, n bigint, first timestamptz, last timestamptz, last_release text)
         where g.id = x.id`,
        [JSON.stringify(bumps)],
      );
    },
  };
}
