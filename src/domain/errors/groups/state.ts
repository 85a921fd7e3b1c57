// The Error Group state table (docs/api.md "States and transitions"), every transition in one place:
// the triage calls, and the reopen a new occurrence causes (the store's SQL takes its states from
// here). The cells left open are decided here (docs/api.md "Error tracking"): a new group is `unresolved`; `acknowledge`
// starts from `unresolved` only; `resolve` from `unresolved` or `acknowledged`; every call whose
// source state is not allowed fails with INVALID_STATE, the way the table treats reopening an
// unresolved group. A stale etag is checked first: ETAG_MISMATCH wins over INVALID_STATE, because
// the caller's view of the state is what is out of date.
import type { Knex } from 'knex';
import { fromKnex } from 'pg-boss';
import { errorGroupEvent } from './present.ts';
import { AppError } from '../../../app-error.ts';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import { emit } from '../../webhooks/outbox/emit.ts';
import { type GroupRow, type GroupState, triageGroup } from './queries.ts';

export type TriageAction = 'acknowledge' | 'resolve' | 'reopen';

export const transitions: Record<TriageAction, { from: readonly GroupState[]; to: GroupState }> = {
  acknowledge: { from: ['unresolved'], to: 'acknowledged' },
  resolve: { from: ['unresolved', 'acknowledged'], to: 'resolved' },
  reopen: { from: ['resolved', 'acknowledged'], to: 'unresolved' },
};

/**
 * A resolved group reopens for an occurrence after its resolve, never for one from before it
 * (getsentry/sentry#30371); the reopen is a state change, so its etag changes with it.
 */
export const reopenOnOccurrence: { from: GroupState; to: GroupState } = { from: 'resolved', to: 'unresolved' };

/** The webhook event each triage call causes (docs/api.md "Webhooks"); acknowledging causes none. */
export const triageEvents: Record<TriageAction, 'error_group.resolved' | 'error_group.reopened' | undefined> = {
  acknowledge: undefined,
  resolve: 'error_group.resolved',
  reopen: 'error_group.reopened',
};

export async function triage(
  deps: { db: Knex; jobs: Jobs },
  env: { id: string; name: string },
  groupId: string,
  action: TriageAction,
  etag: string,
): Promise<GroupRow> {
  const { from, to } = transitions[action];
  const outcome = await deps.db.transaction(async (trx) => {
    const found = await triageGroup(trx, env.id, groupId, etag, from, to);
    const type = triageEvents[action];
    if (found.changed && type) await emit(fromKnex(trx), deps.jobs, [errorGroupEvent(env, type, found.changed)]);
    return found;
  });
  if (outcome.changed) return outcome.changed;
  throw triageRefusal(groupId, action, etag, outcome.prior);
}

/**
 * Why a triage call left its group as it was (`prior`: the group as the call found it; absent, no
 * such group): the single calls throw it, a batch answers it as that group's result (batch.ts).
 */
export function triageRefusal(
  groupId: string,
  action: TriageAction,
  etag: string,
  prior: { state: GroupState; etag: string } | undefined,
): AppError & { code: TriageRefusalCode } {
  return refusal(groupId, action, etag, prior) as AppError & { code: TriageRefusalCode };
}

/** The codes a triage call is refused with; a batch answers them per group. */
export type TriageRefusalCode = 'not_found' | 'INVALID_STATE' | 'ETAG_MISMATCH';

function refusal(
  groupId: string,
  action: TriageAction,
  etag: string,
  prior: { state: GroupState; etag: string } | undefined,
): AppError {
  if (!prior) return new AppError('not_found', `no error group ${groupId} in this environment`);
  const { from } = transitions[action];
  if (prior.etag === etag && !from.includes(prior.state)) {
    return new AppError('INVALID_STATE', `cannot ${action} a group that is ${prior.state}`, {
      details: { state: prior.state, allowed_from: from },
    });
  }
  // A stale etag, or a concurrent call with the same etag that changed the group first.
  return new AppError(
    'ETAG_MISMATCH',
    'the group changed since you read it; read it again and retry with its current etag',
    { details: { current_state: prior.state } },
  );
}
