// A group's tag summary, read from error_group_tags (one row per group, key and value, with how
// many of the group's events carried it; kept by the worker's store), never from the events: the
// group page shows it for a group of a million events as fast as for one of ten.
import type { Db } from '../../../db.ts';

export interface TagValueCount {
  value: string;
  count: number;
}

export interface TagKeySummary {
  key: string;
  /** Events of the group that carried the key, whatever the value. */
  total: number;
  /** The most common values, most events first (ties by value). */
  values: TagValueCount[];
}

/**
 * The group's tag keys, most events first (ties by key), at most `maxKeys`, each with its `perKey`
 * most common values, as Sentry's tag summary shows a group's top values per key. Tags are the
 * client's, so a group may have many keys and values: both are bounded in the statement.
 */
export async function tagSummary(
  db: Db,
  envId: string,
  groupId: string,
  limits: { maxKeys: number; perKey: number },
): Promise<TagKeySummary[]> {
  const { rows } = await db.raw<{ rows: { key: string; total: string; value: string; count: string }[] }>(
    `with keys as (
       select key, sum(count) as total from error_group_tags
        where env_id = ? and group_id = ? group by key order by total desc, key limit ?
     ),
     ranked as (
       select t.key, k.total, t.value, t.count,
              row_number() over (partition by t.key order by t.count desc, t.value) as rank
         from error_group_tags t join keys k on k.key = t.key
        where t.env_id = ? and t.group_id = ?
     )
     select key, total, value, count from ranked where rank <= ? order by total desc, key, rank`,
    [envId, groupId, limits.maxKeys, envId, groupId, limits.perKey],
  );
  const out: TagKeySummary[] = [];
  for (const r of rows) {
    let last = out.at(-1);
    if (last?.key !== r.key) {
      last = { key: r.key, total: Number(r.total), values: [] };
      out.push(last);
    }
    last.values.push({ value: r.value, count: Number(r.count) });
  }
  return out;
}
