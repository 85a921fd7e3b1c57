// Alert rules and their firings as the API shows them (contract/alerts.ts), and the keysets their
// lists page by. A Slack URL is shown only as its hint (rules/actions.ts); a firing names its group
// by the group's resource name, as the error groups' own resources do.
import type { AlertFiring, AlertRule } from '../../contract/alerts.ts';
import { byId, byTimeAndId, type Keyset, type TimePosition } from '../../contract/pages.ts';
import type { FiringActionRow, FiringRow, RuleRow } from './rules/queries.ts';

export const rulePages: Keyset<RuleRow, string> = byId<RuleRow>('alert_rules');

/** Firings page by their time to the microsecond, then id, newest first. */
export const firingPages: Keyset<FiringRow, TimePosition> = byTimeAndId<FiringRow>('alert_firings', (f) => ({
  t: f.time_key,
  id: f.id,
}));

export function ruleView(r: RuleRow): AlertRule {
  return {
    id: r.id,
    name: r.name,
    when: r.when,
    ...(r.threshold_events !== null && r.threshold_window_minutes !== null
      ? { threshold: { events: r.threshold_events, window_minutes: r.threshold_window_minutes } }
      : {}),
    ...(r.q ? { q: r.q } : {}),
    actions: r.actions.map((a) =>
      a.type === 'email' ? { type: 'email' as const, to: a.to } : { type: 'slack' as const, url: a.url_hint },
    ),
    snooze_minutes: r.snooze_minutes,
    state: r.state,
    create_time: r.create_time.toISOString(),
    update_time: r.update_time.toISOString(),
  };
}

/** `envName/error_groups/{id}`, the group's resource name (errors/groups/present.ts groupView). */
export const groupName = (envName: string, groupId: string): string => `${envName}/error_groups/${groupId}`;

export function firingView(envName: string, f: FiringRow, actions: readonly FiringActionRow[]): AlertFiring {
  return {
    time: f.time.toISOString(),
    group: groupName(envName, f.group_id),
    reason: f.reason,
    actions: actions.map((a) => ({ type: a.type, state: a.state, ...(a.error ? { error: a.error } : {}) })),
  };
}
