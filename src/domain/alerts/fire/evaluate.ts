// Alert evaluation (docs/architecture/alerts.md): run by the worker on the transaction that stores
// a batch of events, never inside a request. A batch of environments without enabled rules costs
// one indexed statement (enabledRules); one with rules a few statements per batch, never one per
// event. Everything it writes (snoozes, firings, their actions, the send jobs) commits or rolls back
// with the store, so a batch a killed worker leaves is evaluated again by the run that stores it,
// and a firing is recorded exactly once.
import type { Knex } from 'knex';
import type { Db as BossDb } from 'pg-boss';
import type { SqlTx } from '../../../db.ts';
import { newId } from '../../../ids.ts';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import type { Logger } from '../../../log.ts';
import type { ChangedGroup } from '../../errors/intake/store-queries.ts';
import { parseSearch } from '../../errors/search/parse.ts';
import type { SearchTerm } from '../../errors/search/types.ts';
import { consoleLink } from './facts.ts';
import { addGroupMinutes, enabledRules, recordFirings, windowCounts, type StoredEvent } from './queries.ts';
import type { Candidate, RuleRow } from './rules.ts';
import { searchMatches } from './search-queries.ts';

export interface FireDeps {
  /** The pool: builds the search's SQL (never runs a statement here). */
  db: Knex;
  jobs: Jobs;
  /** CAIRN_BASE_URL: where a message's console link points. */
  baseUrl: string;
  log: Logger;
}

/** What a batch stored: the groups it created or reopened, and its stored events. */
export interface StoredBatch {
  changed: readonly ChangedGroup[];
  events: readonly StoredEvent[];
}

/**
 * The new_group and regression candidates: a group created by the batch for new_group, a resolved
 * group one of its events reopened for regression. A batch stored in parts may name a group twice:
 * created wins, as for the webhook events (groups/events.ts).
 */
function changeCandidates(rules: readonly RuleRow[], changed: readonly ChangedGroup[]): Candidate[] {
  const byId = new Map<string, ChangedGroup>();
  for (const c of changed) if (!byId.get(c.id)?.created) byId.set(c.id, c);
  const out: Candidate[] = [];
  for (const rule of rules) {
    if (rule.when === 'frequency') continue;
    for (const c of byId.values())
      if (c.env_id === rule.env_id && c.created === (rule.when === 'new_group')) out.push({ rule, group_id: c.id });
  }
  return out;
}

/**
 * The frequency candidates: the batch's events are added to their groups' minutes (only in
 * environments with an enabled frequency rule: the others keep no minutes), then each rule's
 * window is summed for the groups they touched.
 */
async function frequencyCandidates(
  tx: SqlTx,
  rules: readonly RuleRow[],
  events: readonly StoredEvent[],
): Promise<Candidate[]> {
  const frequency = rules.filter((r) => r.when === 'frequency');
  if (frequency.length === 0) return [];
  const envs = new Set(frequency.map((r) => r.env_id));
  const mine = events.filter((e) => envs.has(e.env_id));
  if (mine.length === 0) return [];
  const groups = await addGroupMinutes(tx, mine);
  if (groups.length === 0) return [];
  const thresholds = frequency.map((r) => ({
    rule_id: r.id,
    env_id: r.env_id,
    events: r.threshold_events!,
    minutes: r.threshold_window_minutes!,
  }));
  const byId = new Map(frequency.map((r) => [r.id, r]));
  const reached = await windowCounts(tx, thresholds, groups);
  return reached.map((r) => ({ rule: byId.get(r.rule_id)!, group_id: r.group_id, window_count: r.n }));
}

/** A rule's search, parsed; null when it no longer parses (the API checks it: a rule saved otherwise never fires). */
function termsOf(q: string): SearchTerm[] | null {
  try {
    return parseSearch(q);
  } catch {
    return null;
  }
}

/** The candidates whose rule's search covers their group (a rule without one covers every group). */
async function searched(tx: SqlTx, db: Knex, candidates: Candidate[]): Promise<Candidate[]> {
  const terms = new Map<string, SearchTerm[] | null>();
  const groups = new Map<string, Set<string>>();
  for (const c of candidates) {
    if (!terms.has(c.rule.id)) terms.set(c.rule.id, termsOf(c.rule.q));
    const t = terms.get(c.rule.id);
    if (t && t.length > 0) groups.set(c.rule.id, (groups.get(c.rule.id) ?? new Set()).add(c.group_id));
  }
  const rules = new Map(candidates.map((c) => [c.rule.id, c.rule]));
  const matches = await searchMatches(
    tx,
    db,
    [...groups].map(([rule_id, ids]) => ({
      rule_id,
      env_id: rules.get(rule_id)!.env_id,
      terms: terms.get(rule_id)!,
      group_ids: [...ids],
    })),
  );
  const matched = new Set(matches.map((m) => `${m.rule_id}\n${m.group_id}`));
  return candidates.filter((c) => {
    const t = terms.get(c.rule.id);
    if (!t) return false;
    return t.length === 0 || matched.has(`${c.rule.id}\n${c.group_id}`);
  });
}

/**
 * Evaluates the environments' rules for a stored batch, on its transaction (see the top of this
 * file); answers how many firings it recorded. A failure of the evaluation is rolled back to a
 * savepoint and logged, never thrown: an alert must not keep a batch of events from being stored
 * (a throw would fail the store, and after its retries dead-letter its events). The savepoint's
 * two round trips are paid only by batches of environments that have rules.
 */
export async function fireAlerts(deps: FireDeps, tx: BossDb, batch: StoredBatch): Promise<number> {
  const envIds = [...new Set([...batch.events.map((e) => e.env_id), ...batch.changed.map((c) => c.env_id)])];
  if (envIds.length === 0) return 0;
  const rules = await enabledRules(tx, envIds);
  if (rules.length === 0) return 0;
  await tx.executeSql('savepoint alerts');
  try {
    const fired = await evaluate(deps, tx, rules, batch);
    await tx.executeSql('release savepoint alerts');
    return fired;
  } catch (err) {
    await tx.executeSql('rollback to savepoint alerts');
    deps.log.error({ err, env_ids: envIds }, 'alert rules could not be evaluated for a stored batch; none fired');
    return 0;
  }
}

async function evaluate(deps: FireDeps, tx: BossDb, rules: RuleRow[], batch: StoredBatch): Promise<number> {
  const candidates = [
    ...changeCandidates(rules, batch.changed),
    ...(await frequencyCandidates(tx, rules, batch.events)),
  ];
  if (candidates.length === 0) return 0;
  const firing = (await searched(tx, deps.db, candidates)).filter((c) => c.rule.actions.length > 0);
  if (firing.length === 0) return 0;
  const actions = await recordFirings(
    tx,
    firing.map((c) => ({
      id: newId('alf'),
      rule_id: c.rule.id,
      group_id: c.group_id,
      reason: c.rule.when,
      snooze_minutes: c.rule.snooze_minutes,
      window_count: c.window_count ?? null,
      window_minutes: c.rule.when === 'frequency' ? c.rule.threshold_window_minutes : null,
      types: c.rule.actions.map((a) => a.type),
    })),
    consoleLink(deps.baseUrl, ''),
  );
  // One job per (firing, action), queued with the firing: both exist exactly when the store committed.
  await deps.jobs.enqueueJobs(
    tx,
    'alerts.send',
    actions.map((a) => ({ data: { firing_id: a.firing_id, action_index: a.action_index } })),
  );
  return new Set(actions.map((a) => a.firing_id)).size;
}
