// SQL of the evaluation, all on the worker's store transaction (fire/evaluate.ts): the
// environments' enabled rules (read for the worker's copy, rule-cache.ts), the windows frequency
// rules read (their per-minute counts are added by the store's statement,
// errors/intake/store-queries.ts), and the firing itself (snooze claimed, firing and its actions
// recorded) in one statement.
import type { SqlTx } from '../../../db.ts';
import type { RuleRow } from './rules.ts';

/** The enabled rules of these environments (the (env_id, state) index answers it from a page or two). */
export async function enabledRules(tx: SqlTx, envIds: readonly string[]): Promise<RuleRow[]> {
  const { rows } = await tx.executeSql(
    `select id, env_id, "when", threshold_events, threshold_window_minutes, q, actions, snooze_minutes
       from alert_rules where env_id = any($1::text[]) and state = 'enabled' order by id`,
    [envIds],
  );
  return rows as RuleRow[];
}

/** A frequency rule's threshold, as windowCounts takes it. */
export interface Threshold {
  rule_id: string;
  env_id: string;
  events: number;
  minutes: number;
}

/**
 * The (rule, group) pairs whose group's events over the rule's last `minutes` minutes (this one
 * included) reach its threshold, with that count; a pair still snoozed is left out (its claim in
 * recordFirings could not succeed: a running snooze only ever moves later).
 */
export async function windowCounts(
  tx: SqlTx,
  thresholds: readonly Threshold[],
  groupIds: readonly string[],
): Promise<{ rule_id: string; group_id: string; n: number }[]> {
  const { rows } = await tx.executeSql(
    `select r.rule_id, m.group_id, sum(m.count)::int as n
       from jsonb_to_recordset($1::jsonb) as r(rule_id text, env_id text, events int, minutes int)
       join alert_group_minutes m on m.env_id = r.env_id
      where m.group_id = any($2::text[])
        and m.minute > date_trunc('minute', now(), 'UTC') - make_interval(mins => r.minutes)
        and not exists (
          select 1 from alert_snoozes s where s.rule_id = r.rule_id and s.group_id = m.group_id and s.until > now()
        )
      group by r.rule_id, m.group_id, r.events
     having sum(m.count) >= r.events`,
    [JSON.stringify(thresholds), groupIds],
  );
  return rows as { rule_id: string; group_id: string; n: number }[];
}

/** A firing to record, if its snooze lets it. */
export interface FiringInput {
  id: string;
  rule_id: string;
  group_id: string;
  reason: string;
  snooze_minutes: number;
  /** The count the message gives (frequency: the window's), or null for the group's own. */
  window_count: number | null;
  window_minutes: number | null;
  /** The rule's action types, in order. */
  types: string[];
}

/**
 * Claims each pair's snooze and records the firings that won it, with their facts and one pending
 * row per action, in one statement; answers the actions to send. The claim is a conditional
 * upsert: a pair with no snooze, or one whose time is up, is (re)snoozed and fires; one still
 * snoozed does not. Of N workers claiming one pair at once, the first insert's row makes the
 * others wait, then fail the `until <= now()` test: exactly one fires. Claimed in (rule_id,
 * group_id) order, so two batches never deadlock on their snoozes.
 */
export async function recordFirings(
  tx: SqlTx,
  firings: readonly FiringInput[],
  linkPrefix: string,
): Promise<{ firing_id: string; action_index: number }[]> {
  const { rows } = await tx.executeSql(
    `with want as (
       select * from jsonb_to_recordset($1::jsonb) as x(id text, rule_id text, group_id text, reason text,
         snooze_minutes int, window_count int, window_minutes int, types jsonb)
     ),
     claimed as (
       insert into alert_snoozes as s (rule_id, group_id, until)
       select rule_id, group_id, now() + make_interval(mins => snooze_minutes) from want order by rule_id, group_id
       on conflict (rule_id, group_id) do update set until = excluded.until where s.until <= now()
       returning s.rule_id, s.group_id
     ),
     fired as (
       insert into alert_firings (id, rule_id, env_id, group_id, reason, facts)
       select w.id, w.rule_id, g.env_id, g.id, w.reason, jsonb_build_object(
           'title', g.title, 'culprit', g.culprit, 'environment', v.name,
           'count', coalesce(w.window_count, g.occurrence_count), 'window_minutes', w.window_minutes,
           'release', g.last_release, 'first_seen', g.first_seen_time, 'last_seen', g.last_seen_time,
           'link', $2::text || g.id)
         from want w join claimed c using (rule_id, group_id)
         join error_groups g on g.id = w.group_id join envs v on v.id = g.env_id
       returning id
     )
     insert into alert_firing_actions (firing_id, action_index, type)
     select w.id, (a.n - 1)::smallint, a.type from want w join fired f on f.id = w.id
       cross join jsonb_array_elements_text(w.types) with ordinality as a(type, n)
     returning firing_id, action_index`,
    [JSON.stringify(firings), linkPrefix],
  );
  return rows as { firing_id: string; action_index: number }[];
}
