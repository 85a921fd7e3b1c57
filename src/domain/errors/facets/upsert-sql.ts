// The tag and user upserts that keep a group's facets (error_group_tags, error_group_users), as CTE
// bodies over a row source `m` (one row per stored event: its tags as [key, value] pairs, its user
// key and fields), shared by the worker's store (intake/store-queries.ts) and the backfill of
// events stored before the facets (facets/queries.ts), so both count alike. Rows are inserted in
// (group, key) order, the order every writer locks them in, so concurrent writers never deadlock.

/** `from`: the source of `m` (with whatever joins give the group); `group`: the group id's expression. */
export interface FacetSource {
  from: string;
  group: string;
}

/** Each event's tags count once per (key, value). */
export const tagUpsertSql = ({ from, group }: FacetSource): string => `
         insert into error_group_tags as t (group_id, env_id, key, value, count, last_seen_time)
         select ${group}, m.env_id, p->>0, p->>1, count(*), max(m.receive_time)
         from ${from} cross join jsonb_array_elements(m.tags) p
         group by 1, 2, 3, 4 order by 1, 3, 4
         on conflict (group_id, key, value) do update set count = t.count + excluded.count,
           last_seen_time = greatest(t.last_seen_time, excluded.last_seen_time)`;

/** Each event's user counts once per user key; its fields are the latest event's that gave them. */
export const userUpsertSql = ({ from, group }: FacetSource): string => `
         insert into error_group_users as u (group_id, env_id, user_key, user_id, email, username, count,
           first_seen_time, last_seen_time)
         select ${group}, m.env_id, m.user_key,
           (array_agg(m.user_id order by m.receive_time desc, m.uid desc) filter (where m.user_id is not null))[1],
           (array_agg(m.email order by m.receive_time desc, m.uid desc) filter (where m.email is not null))[1],
           (array_agg(m.username order by m.receive_time desc, m.uid desc) filter (where m.username is not null))[1],
           count(*), min(m.receive_time), max(m.receive_time)
         from ${from} where m.user_key is not null
         group by 1, 2, 3 order by 1, 3
         on conflict (group_id, user_key) do update set count = u.count + excluded.count,
           first_seen_time = least(u.first_seen_time, excluded.first_seen_time),
           last_seen_time = greatest(u.last_seen_time, excluded.last_seen_time),
           user_id = case when excluded.last_seen_time >= u.last_seen_time then coalesce(excluded.user_id, u.user_id) else coalesce(u.user_id, excluded.user_id) end,
           email = case when excluded.last_seen_time >= u.last_seen_time then coalesce(excluded.email, u.email) else coalesce(u.email, excluded.email) end,
           username = case when excluded.last_seen_time >= u.last_seen_time then coalesce(excluded.username, u.username) else coalesce(u.username, excluded.username) end
         returning u.group_id, (u.xmax = 0) as created`;
