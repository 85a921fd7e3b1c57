// Alert evaluation (docs/architecture/alerts.md): run by the worker on the transaction that stores
// a batch of events, never inside a request. The environments' rules come from the worker's copy
// (rule-cache.ts), and the per-minute counts frequency rules read are added by the store's own
// statement (errors/intake/store-queries.ts), so a batch for which no rule can fire (no rules; no
// new group for new_group rules, no reopened one for regression rules, no counted group for
// frequency rules) costs no statement at all; one that may fire a few statements, never one per
// event. Everything it writes (snoozes, firings, their actions, the send jobs) commits or rolls
// back with the store, so a batch a killed worker leaves is evaluated again by the run that stores
// it, and a firing is recorded exactly once.
import type { Knex } from 'knex';
import type { Db as BossDb } from 'pg-boss';
import type { SqlTx } from '../../../db.ts';
import { newId } from '../../../ids.ts';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import type { Logger } from '../../../log.ts';
import type { ChangedGroup } from '../../errors/intake/store-queries.ts';
import { parseSearch } from '../../errors/search/parse.ts';
import type { SearchTerm } from '../../errors/search/types.ts';
import { firingsPerJob } from '../queues.ts';
import { consoleLink } from './facts.ts';
import { recordFirings, windowCounts } from './queries.ts';
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

/** What a batch stored: the groups it created or reopened, and those whose minutes it counted. */
export interface StoredBatch {
  changed: readonly ChangedGroup[];
  /** Groups of environments with a frequency rule (frequencyEnvs), their minutes added to by the store. */
  minuteGroups: readonly string[];
}

/** The environments whose groups keep per-minute counts: those with an enabled frequency rule. */
export const frequencyEnvs = (rules: readonly RuleRow[]): string[] => [
  ...new Set(rules.filter((r) => r.when === 'frequency').map((r) => r.env_id)),
];

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
 * The frequency candidates: each rule's window summed for the groups the store counted, where it
 * reaches the threshold and the (rule, group) pair is not snoozed (a snooze this transaction sees
 * is committed and only ever moves later, so its claim could not succeed: recordFirings).
 */
async function frequencyCandidates(
  tx: SqlTx,
  frequency: readonly RuleRow[],
  groups: readonly string[],
): Promise<Candidate[]> {
  if (frequency.length === 0 || groups.length === 0) return [];
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
 * Evaluates the environments' enabled `rules` (RuleCache) for a stored batch, on its transaction
 * (see the top of this file); answers how many firings it recorded. A failure of the evaluation is
 * rolled back to a savepoint and logged, never thrown: an alert must not keep a batch of events
 * from being stored (a throw would fail the store, and after its retries dead-letter its events).
 * The savepoint's two round trips are paid only by batches for which a rule may fire.
 */
export async function fireAlerts(
  deps: FireDeps,
  tx: BossDb,
  rules: readonly RuleRow[],
  batch: StoredBatch,
): Promise<number> {
  if (rules.length === 0) return 0;
  const changes = changeCandidates(rules, batch.changed);
  const frequency = batch.minuteGroups.length > 0 ? rules.filter((r) => r.when === 'frequency') : [];
  if (changes.length === 0 && frequency.length === 0) return 0;
  await tx.executeSql('savepoint alerts');
  try {
    const candidates = [...changes, ...(await frequencyCandidates(tx, frequency, batch.minuteGroups))];
    const fired = candidates.length > 0 ? await fire(deps, tx, candidates) : 0;
    await tx.executeSql('release savepoint alerts');
    return fired;
  } catch (err) {
    await tx.executeSql('rollback to savepoint alerts');
    const envIds = [...new Set(rules.map((r) => r.env_id))];
    deps.log.error({ err, env_ids: envIds }, 'alert rules could not be evaluated for a stored batch; none fired');
    return 0;
  }
}

/** Searches the candidates, claims their snoozes and records the firings with their send jobs. */
async function fire(deps: FireDeps, tx: BossDb, candidates: Candidate[]): Promise<number> {
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
  // The firings' send jobs (`firingsPerJob` firings each; their actions each keep their outcome),
  // queued with the firings: both exist exactly when the store committed.
  const fired = [...new Set(actions.map((a) => a.firing_id))];
  const jobs = [];
  for (let i = 0; i < fired.length; i += firingsPerJob)
    jobs.push({ data: { firing_ids: fired.slice(i, i + firingsPerJob) } });
  await deps.jobs.enqueueJobs(tx, 'alerts.send', jobs);
  return fired.length;
}
