// SQL of the send jobs: what a firing's actions need to be sent, and each one's outcome.
import type { Db } from '../../../db.ts';
import type { FiringFacts } from '../fire/facts.ts';
import type { AlertAction, FiringReason } from '../fire/rules.ts';

export interface ActionContext {
  firing_id: string;
  action_index: number;
  type: string;
  state: 'pending' | 'sent' | 'failed';
  attempt_count: number;
  reason: FiringReason;
  facts: FiringFacts;
  env_id: string;
  env_mode: 'test' | 'live';
  rule_id: string;
  rule_name: string;
  /** The rule's actions now (a rule edited since the firing may hold another at this index). */
  actions: AlertAction[];
}

/**
 * Where each field of an ActionContext is read from; keyed by the interface, so the compiler
 * refuses a field the query would not read.
 */
const actionColumns = {
  firing_id: 'a.firing_id',
  action_index: 'a.action_index',
  type: 'a.type',
  state: 'a.state',
  attempt_count: 'a.attempt_count',
  reason: 'f.reason',
  facts: 'f.facts',
  env_id: 'f.env_id',
  env_mode: 'v.mode',
  rule_id: 'r.id',
  rule_name: 'r.name',
  actions: 'r.actions',
} satisfies Record<keyof ActionContext, string>;

/** These firings' actions, in order, each with its firing, rule and environment; none for one gone (pruned, rule deleted). */
export async function firingsActions(db: Db, firingIds: readonly string[]): Promise<ActionContext[]> {
  if (firingIds.length === 0) return [];
  return (await db('alert_firing_actions as a')
    .join('alert_firings as f', 'f.id', 'a.firing_id')
    .join('alert_rules as r', 'r.id', 'f.rule_id')
    .join('envs as v', 'v.id', 'f.env_id')
    .whereIn('a.firing_id', [...new Set(firingIds)])
    .orderBy(['a.firing_id', 'a.action_index'])
    .select(actionColumns)) as ActionContext[];
}

/** One attempt's outcome of one action. */
export interface Outcome {
  firing_id: string;
  action_index: number;
  state: 'pending' | 'sent' | 'failed';
  error: string | null;
}

/**
 * Records attempts' outcomes in one statement: `sent`, `failed` (the last attempt), or still
 * `pending` with its error. Only a pending action changes, so a job that ran twice counts a settled
 * action once.
 */
export async function recordOutcomes(db: Db, outcomes: readonly Outcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await db.raw(
    `update alert_firing_actions a
        set state = o.state, error = o.error, attempt_count = a.attempt_count + 1, update_time = now()
       from jsonb_to_recordset(?::jsonb) as o(firing_id text, action_index int, state text, error text)
      where a.firing_id = o.firing_id and a.action_index = o.action_index and a.state = 'pending'`,
    // jsonb refuses NUL and lone surrogates (a receiver's text cut mid-pair): the error is kept
    // without them, as a text column would need anyway.
    [JSON.stringify(outcomes.map((o) => ({ ...o, error: o.error?.replace(/\0/g, '').toWellFormed() ?? null })))],
  );
}

export const keepFiringsMs = 30 * 24 * 3600 * 1000;

/**
 * Firings past their 30 days (their actions go with them), snoozes past their time, and minutes
 * past the longest window (a day); a bounded batch at a time. Answers how many rows went.
 */
export async function pruneAlertsBatch(db: Db, now: Date, batch: number): Promise<number> {
  const firings = await db.raw<{ rowCount: number }>(
    `delete from alert_firings where id in (select id from alert_firings where time < ? order by time limit ?)`,
    [new Date(now.getTime() - keepFiringsMs), batch],
  );
  const snoozes = await db.raw<{ rowCount: number }>(
    `delete from alert_snoozes where (rule_id, group_id) in
       (select rule_id, group_id from alert_snoozes where until < ? limit ?)`,
    [now, batch],
  );
  const minutes = await db.raw<{ rowCount: number }>(
    `delete from alert_group_minutes where (group_id, minute) in
       (select group_id, minute from alert_group_minutes where minute < ? limit ?)`,
    [new Date(now.getTime() - 24 * 3600 * 1000), batch],
  );
  return firings.rowCount + snoozes.rowCount + minutes.rowCount;
}
