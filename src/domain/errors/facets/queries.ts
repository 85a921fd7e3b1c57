// The facets backfill's SQL (backfill.ts): its cursor, the events it reads, and the upserts of
// their groups' tags and users, in the store's lock order (intake/store-queries.ts).
import type { Knex } from 'knex';
import type { EventFacets } from '../pipeline/facets.ts';

/** Where the walk is: after this (env_id, receive_time, uid); nothing yet when env_id is null. */
export interface BackfillCursor {
  env_id: string | null;
  receive_time: Date | null;
  uid: string | null;
  events: number;
  done_time: Date | null;
}

export interface OldEvent {
  uid: string;
  env_id: string;
  group_id: string;
  receive_time: Date;
  event_time: Date;
  release: string;
  body_deflated: Buffer;
}

/** An event's facets, as the upsert takes them. */
export type FacetRow = Pick<OldEvent, 'uid' | 'env_id' | 'group_id' | 'receive_time' | 'event_time' | 'release'> &
  Pick<EventFacets, 'tags'> &
  Partial<NonNullable<EventFacets['user']>>;

/** Whether the walk is over (nothing to queue at a release). */
export async function backfillDone(db: Knex): Promise<boolean> {
  const row = (await db('error_facets_backfill').where({ id: 'facets' }).first('done_time')) as
    { done_time: Date | null } | undefined;
  return row?.done_time != null;
}

/**
 * The cursor, locked until the caller's transaction ends: two runs of the job (a retry beside a
 * late first run) take turns, each reading where the other left off.
 */
export async function lockCursor(trx: Knex.Transaction): Promise<BackfillCursor> {
  const row = (await trx('error_facets_backfill').where({ id: 'facets' }).forUpdate().first()) as
    (Omit<BackfillCursor, 'events'> & { events: string }) | undefined;
  if (!row) throw new Error('error_facets_backfill has no cursor row (migration create_error_facets_backfill)');
  return { ...row, events: Number(row.events) };
}

/**
 * The next `limit` events stored without their facets, after the cursor, in the order of the
 * (env_id, receive_time) index, which every partition has: a walk by receive time alone would
 * sort a whole day's partition for each batch.
 */
export async function oldEvents(trx: Knex.Transaction, cursor: BackfillCursor, limit: number): Promise<OldEvent[]> {
  const after = cursor.env_id === null ? '' : 'and (env_id, receive_time, uid) > (?::text, ?::timestamptz, ?::text)';
  const { rows } = await trx.raw<{ rows: OldEvent[] }>(
    `select uid, env_id, group_id, receive_time, event_time, release, body_deflated from error_events
      where not facets_kept ${after} order by env_id, receive_time, uid limit ?`,
    cursor.env_id === null ? [limit] : [cursor.env_id, cursor.receive_time, cursor.uid, limit],
  );
  return rows;
}

/**
 * Adds the events' tags and users to their groups (as the store does, adding counts and keeping
 * the latest times), their new users to `user_count`, and the release of a group's first event
 * where the group has none (a group an earlier worker made after the facets' migration). One
 * statement updates each group once: its user count and first release together. The groups are locked first in the store's order, then their tag and
 * user rows in theirs, so the backfill and a store never deadlock.
 */
export async function addFacets(trx: Knex.Transaction, rows: FacetRow[]): Promise<void> {
  const json = JSON.stringify(rows);
  await trx.raw(
    `select 1 from error_groups where id in (select distinct x->>'group_id' from jsonb_array_elements(?::jsonb) x)
      order by env_id, fingerprint for update`,
    [json],
  );
  await trx.raw(
    `with m as (
         select * from jsonb_to_recordset(?::jsonb) as x(uid text, env_id text, group_id text, receive_time timestamptz,
           event_time timestamptz, release text, tags jsonb, user_key text, user_id text, email text, username text)
       ),
       tag_rows as (
         insert into error_group_tags as t (group_id, env_id, key, value, count, last_seen_time)
         select m.group_id, m.env_id, p->>0, p->>1, count(*), max(m.receive_time)
         from m cross join jsonb_array_elements(m.tags) p
         group by 1, 2, 3, 4 order by 1, 3, 4
         on conflict (group_id, key, value) do update set count = t.count + excluded.count,
           last_seen_time = greatest(t.last_seen_time, excluded.last_seen_time)
       ),
       users as (
         insert into error_group_users as u (group_id, env_id, user_key, user_id, email, username, count,
           first_seen_time, last_seen_time)
         select m.group_id, m.env_id, m.user_key,
           (array_agg(m.user_id order by m.receive_time desc, m.uid desc) filter (where m.user_id is not null))[1],
           (array_agg(m.email order by m.receive_time desc, m.uid desc) filter (where m.email is not null))[1],
           (array_agg(m.username order by m.receive_time desc, m.uid desc) filter (where m.username is not null))[1],
           count(*), min(m.receive_time), max(m.receive_time)
         from m where m.user_key is not null
         group by 1, 2, 3 order by 1, 3
         on conflict (group_id, user_key) do update set count = u.count + excluded.count,
           first_seen_time = least(u.first_seen_time, excluded.first_seen_time),
           last_seen_time = greatest(u.last_seen_time, excluded.last_seen_time),
           user_id = case when excluded.last_seen_time >= u.last_seen_time then coalesce(excluded.user_id, u.user_id) else coalesce(u.user_id, excluded.user_id) end,
           email = case when excluded.last_seen_time >= u.last_seen_time then coalesce(excluded.email, u.email) else coalesce(u.email, excluded.email) end,
           username = case when excluded.last_seen_time >= u.last_seen_time then coalesce(excluded.username, u.username) else coalesce(u.username, excluded.username) end
         returning u.group_id, (u.xmax = 0) as created
       ),
       new_users as (select group_id, count(*) as n from users where created group by group_id)
     update error_groups g set user_count = g.user_count + coalesce(n.n, 0),
       first_release = case when g.first_release = '' and f.release <> '' and f.event_time = g.first_seen_time
         then f.release else g.first_release end
       from (select distinct on (group_id) group_id, release, event_time from m order by group_id, event_time, uid) f
       left join new_users n using (group_id)
      where g.id = f.group_id`,
    [json],
  );
}

/** Moves the cursor past the batch (or marks the walk done), on the batch's transaction. */
export async function moveCursor(trx: Knex.Transaction, last: OldEvent | undefined, added: number): Promise<void> {
  await trx('error_facets_backfill')
    .where({ id: 'facets' })
    .update(
      last
        ? {
            env_id: last.env_id,
            receive_time: last.receive_time,
            uid: last.uid,
            events: trx.raw('events + ?', [added]),
          }
        : { done_time: trx.fn.now() },
    );
}
