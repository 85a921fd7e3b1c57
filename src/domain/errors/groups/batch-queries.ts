// The statements of a bulk triage (batch.ts): lock the named groups, then change those whose etag
// and state still allow it, on the caller's transaction.
import type { Db } from '../../../db.ts';
import { groupColumns, newEtagSql, type GroupRow, type GroupState } from './queries.ts';

export interface LockedGroup {
  id: string;
  state: GroupState;
  etag: string;
}

/**
 * The environment's groups among `ids`, each locked (FOR UPDATE) until the transaction ends. Rows
 * are locked in the order they are returned (the lock is taken above the sort), by fingerprint:
 * the order the ingest's store takes an environment's groups in (intake/queries.ts `storeEvents`),
 * so two batches, or a batch and a store, that share groups wait for each other and never
 * deadlock. An id, unique as it is, would keep batches apart but not a batch and a store.
 */
export async function lockGroups(db: Db, envId: string, ids: readonly string[]): Promise<LockedGroup[]> {
  const { rows } = await db.raw<{ rows: LockedGroup[] }>(
    `select id, state, etag from error_groups where env_id = ? and id = any(?::text[]) order by fingerprint for update`,
    [envId, [...ids]],
  );
  return rows;
}

/** Moves the groups (already locked by lockGroups) to `to` with fresh etags, as the single triage does. */
export async function setGroupsState(
  db: Db,
  envId: string,
  ids: readonly string[],
  to: GroupState,
): Promise<GroupRow[]> {
  if (ids.length === 0) return [];
  const { rows } = await db.raw<{ rows: GroupRow[] }>(
    `update error_groups set state = ?, etag = ${newEtagSql}, update_time = now(),
       resolve_time = case when ? = 'resolved' then now() else null end
     where env_id = ? and id = any(?::text[])
     returning ${groupColumns.join(', ')}`,
    [to, to, envId, [...ids]],
  );
  return rows;
}

/** The environment's groups among `ids` by title, with their state (what a bulk action's answer names). */
export async function groupTitles(
  db: Db,
  envId: string,
  ids: readonly string[],
): Promise<{ id: string; title: string; state: GroupState }[]> {
  if (ids.length === 0) return [];
  const rows: { id: string; title: string; state: GroupState }[] = await db('error_groups')
    .where({ env_id: envId })
    .whereIn('id', [...ids])
    .select('id', 'title', 'state');
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
}
