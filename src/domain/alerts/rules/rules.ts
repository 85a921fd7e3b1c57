// An environment's alert rules (docs/api.md "Alerts"): create, update, delete. A rule is checked
// whole before it is stored, each refusal a 400 naming its field: the search in `q` by the search
// language's own parser (errors/search/parse.ts, so a rule's search means what the error list's
// does), a threshold for frequency rules only, Slack URLs by the webhook targets' rule
// (actions.ts). At most 50 rules per environment, counted under the environment's row lock.
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import type { Config } from '../../../config.ts';
import { alertLimits, type AlertWhen } from '../../../contract/alerts.ts';
import type { Resolver } from '../../../egress/addresses.ts';
import { targetRule } from '../../../egress/target-rule.ts';
import { newId } from '../../../ids.ts';
import { parseSearch } from '../../errors/search/parse.ts';
import { lockEnv, tenancyQueries } from '../../tenancy/queries.ts';
import { storeActions, type ActionDeps, type ActionInput } from './actions.ts';
import {
  countRules,
  findRule,
  findRuleForUpdate,
  insertRule,
  patchRule,
  removeRule,
  type RuleFields,
  type RuleRow,
  type RuleState,
} from './queries.ts';

export interface RuleDeps {
  config: Config;
  db: Knex;
  /** DNS for Slack hosts (tests pass their own). */
  resolve?: Resolver | undefined;
}

interface Threshold {
  events: number;
  window_minutes: number;
}

export interface RuleInput {
  name: string;
  when: AlertWhen;
  threshold?: Threshold | undefined;
  q?: string | undefined;
  actions: ActionInput[];
  snooze_minutes: number;
  state: RuleState;
}

export type RulePatch = Partial<RuleInput>;

const refuse = (field: string, message: string, extra: Record<string, unknown> = {}) =>
  new AppError('invalid_request', `${field.replace(/^body\./, '')}: ${message}`, {
    details: { ...extra, fields: [{ field, message }] },
  });

const notFound = (id: string) => new AppError('not_found', `no alert rule ${id} in this environment`);

/** `q` as stored: trimmed, and parsed here so a search the error list would refuse is refused now. */
function checkedSearch(q: string): string {
  try {
    parseSearch(q);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    // The search's own refusal shape (`field`, `term`: docs/api.md "Search"), and `fields` as
    // every other refusal of a body names its field.
    const term = err.details?.term;
    throw refuse('body.q', err.message.replace(/^q: /, ''), {
      field: 'body.q',
      ...(term === undefined ? {} : { term }),
    });
  }
  return q.trim();
}

/** The threshold columns of a rule that is (or becomes) `when`, from the patch or what it had. */
function thresholdOf(when: AlertWhen, given: Threshold | undefined, had?: RuleRow) {
  if (when !== 'frequency') {
    if (given) throw refuse('body.threshold', 'only a frequency rule has a threshold');
    return { threshold_events: null, threshold_window_minutes: null };
  }
  if (given) return { threshold_events: given.events, threshold_window_minutes: given.window_minutes };
  if (had?.threshold_events != null) return {};
  throw refuse('body.threshold', 'a frequency rule needs a threshold');
}

async function actionDeps(deps: RuleDeps, envId: string): Promise<ActionDeps> {
  const env = await tenancyQueries(deps.db).envById(envId);
  return { config: deps.config, rule: targetRule(deps.config, env!.mode), resolve: deps.resolve };
}

export async function createRule(deps: RuleDeps, envId: string, input: RuleInput): Promise<RuleRow> {
  const id = newId('alr');
  const fields: RuleFields = {
    name: input.name,
    when: input.when,
    threshold_events: null,
    threshold_window_minutes: null,
    ...thresholdOf(input.when, input.threshold),
    q: checkedSearch(input.q ?? ''),
    // Resolved before the transaction: a slow DNS answer holds no lock.
    actions: await storeActions(await actionDeps(deps, envId), id, input.actions),
    snooze_minutes: input.snooze_minutes,
    state: input.state,
  };
  return deps.db.transaction(async (trx) => {
    // Counted under the environment's row lock, so parallel creates cannot pass the cap together;
    // no key update, so the environment's other writes (their foreign keys' key-share) go on.
    await lockEnv(trx, envId, 'no key update');
    if ((await countRules(trx, envId)) >= alertLimits.rulesPerEnv)
      throw new AppError('conflict', `this environment has ${alertLimits.rulesPerEnv} alert rules; delete one first`);
    return insertRule(trx, { id, env_id: envId, ...fields });
  });
}

export async function requireRule(db: Knex, envId: string, id: string): Promise<RuleRow> {
  const row = await findRule(db, envId, id);
  if (!row) throw notFound(id);
  return row;
}

export async function updateRule(deps: RuleDeps, envId: string, id: string, patch: RulePatch): Promise<RuleRow> {
  const before = await requireRule(deps.db, envId, id);
  const q = patch.q === undefined ? undefined : checkedSearch(patch.q);
  const actions =
    patch.actions === undefined
      ? undefined
      : await storeActions(await actionDeps(deps, envId), id, patch.actions, before.actions);
  return deps.db.transaction(async (trx) => {
    const current = await findRuleForUpdate(trx, envId, id);
    if (!current) throw notFound(id);
    const changes: Partial<RuleFields> = {
      ...(patch.name !== undefined ? { name: patch.name } : {}),
      ...(patch.when !== undefined ? { when: patch.when } : {}),
      ...thresholdOf(patch.when ?? current.when, patch.threshold, current),
      ...(q !== undefined ? { q } : {}),
      ...(actions !== undefined ? { actions } : {}),
      ...(patch.snooze_minutes !== undefined ? { snooze_minutes: patch.snooze_minutes } : {}),
      ...(patch.state !== undefined ? { state: patch.state } : {}),
    };
    return patchRule(trx, envId, id, changes);
  });
}

/** Deletes a rule with its snoozes and firings; a send already queued for it finds it gone. */
export async function deleteRule(db: Knex, envId: string, id: string): Promise<void> {
  if (!(await removeRule(db, envId, id))) throw notFound(id);
}
