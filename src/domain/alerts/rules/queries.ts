// SQL for an environment's alert rules and the firings they list: every query is scoped by the
// environment. The firings themselves are written by the worker (domain/alerts/fire/); here they
// are only read.
import type { Db } from '../../../db.ts';
import type { AlertWhen } from '../../../contract/alerts.ts';
import type { TimePosition } from '../../../contract/pages.ts';

export type RuleState = 'enabled' | 'disabled';

/** An action as stored: a Slack URL sealed (rules/actions.ts), with the hint the API shows of it. */
export type StoredAction = { type: 'email'; to: string[] } | { type: 'slack'; url_sealed: string; url_hint: string };

export interface RuleRow {
  id: string;
  env_id: string;
  name: string;
  when: AlertWhen;
  threshold_events: number | null;
  threshold_window_minutes: number | null;
  q: string;
  actions: StoredAction[];
  snooze_minutes: number;
  state: RuleState;
  create_time: Date;
  update_time: Date;
}

export type RuleFields = Omit<RuleRow, 'id' | 'env_id' | 'create_time' | 'update_time'>;

const rules = (db: Db) => db<RuleRow>('alert_rules');

// jsonb: knex would send an array as a Postgres array, so the list goes as its JSON text.
const stored = <T extends Partial<RuleFields>>(fields: T) =>
  fields.actions === undefined ? fields : { ...fields, actions: JSON.stringify(fields.actions) };

export async function countRules(db: Db, envId: string): Promise<number> {
  const row = await rules(db).where({ env_id: envId }).count<{ n: string }[]>('* as n').first();
  return Number(row?.n ?? 0);
}

export async function insertRule(db: Db, row: RuleFields & { id: string; env_id: string }): Promise<RuleRow> {
  const [created] = await rules(db)
    .insert(stored(row) as unknown as RuleRow)
    .returning('*');
  return created!;
}

export async function findRule(db: Db, envId: string, id: string): Promise<RuleRow | undefined> {
  return rules(db).where({ env_id: envId, id }).first();
}

export async function findRuleForUpdate(db: Db, envId: string, id: string): Promise<RuleRow | undefined> {
  return rules(db).where({ env_id: envId, id }).forUpdate().first();
}

/** Oldest first, after `after` (an id). */
export async function listRules(db: Db, envId: string, after: string | undefined, limit: number): Promise<RuleRow[]> {
  const q = rules(db).where({ env_id: envId }).orderBy('id').limit(limit);
  if (after) q.where('id', '>', after);
  return q;
}

export async function patchRule(db: Db, envId: string, id: string, patch: Partial<RuleFields>): Promise<RuleRow> {
  const [row] = await rules(db)
    .where({ env_id: envId, id })
    .update({ ...stored(patch), update_time: db.fn.now() } as unknown as Partial<RuleRow>)
    .returning('*');
  return row!;
}

/** Deletes a rule with (by cascade) its snoozes, firings and their actions' outcomes. */
export async function removeRule(db: Db, envId: string, id: string): Promise<boolean> {
  return (await rules(db).where({ env_id: envId, id }).delete()) > 0;
}

export interface FiringRow {
  id: string;
  group_id: string;
  reason: string;
  time: Date;
  /** `time` as Postgres prints it, to the microsecond: the position a page token carries. */
  time_key: string;
}

/** A rule's firings, newest first, before `before` (time, then id). */
export async function listFirings(
  db: Db,
  envId: string,
  ruleId: string,
  before: TimePosition | undefined,
  limit: number,
): Promise<FiringRow[]> {
  const q = db('alert_firings')
    .where({ env_id: envId, rule_id: ruleId })
    .orderBy([
      { column: 'time', order: 'desc' },
      { column: 'id', order: 'desc' },
    ])
    .limit(limit)
    .select('id', 'group_id', 'reason', 'time', db.raw('"time"::text as time_key'));
  if (before) q.whereRaw('("time", id) < (?::timestamptz, ?)', [before.t, before.id]);
  return q;
}

export interface FiringActionRow {
  firing_id: string;
  action_index: number;
  type: string;
  state: 'pending' | 'sent' | 'failed';
  error: string | null;
}

/** The actions' outcomes of these firings, in each firing's action order. */
export async function listFiringActions(db: Db, firingIds: readonly string[]): Promise<FiringActionRow[]> {
  if (firingIds.length === 0) return [];
  return db('alert_firing_actions')
    .whereIn('firing_id', firingIds)
    .orderBy(['firing_id', 'action_index'])
    .select('firing_id', 'action_index', 'type', 'state', 'error');
}

export interface LastFiringRow {
  rule_id: string;
  time: Date;
  group_id: string;
  title: string;
}

/**
 * Each rule's latest firing, with its group's title (the console's list of rules): one index probe
 * per rule (alert_firings (rule_id, time, id)), however many firings a rule has kept.
 */
export async function lastFirings(db: Db, envId: string, ruleIds: readonly string[]): Promise<LastFiringRow[]> {
  if (ruleIds.length === 0) return [];
  const { rows } = await db.raw<{ rows: LastFiringRow[] }>(
    `select f.rule_id, f."time", f.group_id, g.title
       from unnest(?::text[]) as r(id)
       cross join lateral (
         select rule_id, "time", group_id from alert_firings
          where rule_id = r.id and env_id = ?
          order by "time" desc, id desc limit 1) f
       join error_groups g on g.id = f.group_id`,
    [[...ruleIds], envId],
  );
  return rows;
}
