// Bulk triage (docs/api.md "Bulk triage"): one triage call applied to up to 100 groups, each
// group on its own terms. A group changes exactly as its single call would change it (groups/state.ts
// `triage`: the same transition, a fresh etag, the same webhook event) and only while the etag
// sent for it still matches; every other group's result says why not, with the code its single
// call answers. One transaction holds the batch, so its changes and their events commit
// together, but it is not all-or-nothing: a stale etag leaves that group alone and the rest go on.
import type { Knex } from 'knex';
import { fromKnex } from 'pg-boss';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import { emit } from '../../webhooks/outbox/emit.ts';
import { lockGroups, setGroupsState } from './batch-queries.ts';
import { errorGroupEvent } from './present.ts';
import type { GroupRow } from './queries.ts';
import { transitions, triageEvents, triageRefusal, type TriageAction, type TriageRefusalCode } from './state.ts';

export interface BatchItem {
  /** The group's id or resource name (a batch names each group once: the contract refuses a repeat). */
  name: string;
  etag: string;
}

/**
 * The id a batch item names in this environment: an id as it is, a resource name only under the
 * environment's own name (another environment's group is not found here, as its id would not be).
 */
function idIn(envName: string, name: string): string {
  const prefix = `${envName}/error_groups/`;
  if (!name.includes('/')) return name;
  return name.startsWith(prefix) ? name.slice(prefix.length) : '';
}

/** One group's result: the changed group, or the refusal its single call would have thrown. */
export type BatchOutcome =
  { group: GroupRow } | { error: { code: TriageRefusalCode; message: string; details?: Record<string, unknown> } };

export async function batchTriage(
  deps: { db: Knex; jobs: Jobs },
  env: { id: string; name: string },
  items: readonly BatchItem[],
  action: TriageAction,
): Promise<BatchOutcome[]> {
  const { from, to } = transitions[action];
  const named = items.map((i) => ({ id: idIn(env.name, i.name), etag: i.etag }));
  return deps.db.transaction(async (trx) => {
    // Locked first, so the check below and the change hold against concurrent triage and stores.
    const locked = new Map((await lockGroups(trx, env.id, [...new Set(named.map((i) => i.id))])).map((g) => [g.id, g]));
    const allowed = [
      ...new Set(
        named
          .filter((i) => {
            const g = locked.get(i.id);
            return g !== undefined && g.etag === i.etag && from.includes(g.state);
          })
          .map((i) => i.id),
      ),
    ];
    const changed = new Map((await setGroupsState(trx, env.id, allowed, to)).map((g) => [g.id, g]));
    const type = triageEvents[action];
    // In the order the groups were sent, as that many single calls would have written them.
    if (type && allowed.length > 0)
      await emit(
        fromKnex(trx),
        deps.jobs,
        allowed.map((id) => errorGroupEvent(env, type, changed.get(id)!)),
      );
    return named.map((i, n): BatchOutcome => {
      const g = changed.get(i.id);
      if (g) return { group: g };
      const { code, message, details } = triageRefusal(items[n]!.name, action, i.etag, locked.get(i.id));
      return { error: { code, message, ...(details ? { details } : {}) } };
    });
  });
}
