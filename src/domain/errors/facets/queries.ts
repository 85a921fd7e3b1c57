// The facets backfill's SQL (backfill.ts): its cursor, the events it reads, and the upserts of
// their groups' tags and users, in the store's lock order (intake/store-queries.ts).
import type { Knex } from 'knex';
import type { EventFacets } from '../pipeline/facets.ts';
import { tagUpsertSql, userUpsertSql, type FacetSource } from './upsert-sql.ts';

/** The backfill's rows: `m`, each naming its group. */
const backfilled: FacetSource = { from: 'm', group: 'm.group_id' };

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
       tag_rows as (${tagUpsertSql(backfilled)}
       ),
       users as (${userUpsertSql(backfilled)}
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
