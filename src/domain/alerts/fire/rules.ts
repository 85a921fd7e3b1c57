// An alert rule as the evaluation reads it (migrations/20261206100000_create_alerts.ts): what
// fires it, which groups it covers (`q`), whom it tells, and how long it then stays quiet.

/** Tell these addresses by mail. */
export interface EmailAction {
  type: 'email';
  to: string[];
}

/** POST to a Slack-style incoming webhook; its URL is a bearer secret, stored sealed (send/slack.ts). */
export interface SlackAction {
  type: 'slack';
  url_sealed: string;
  url_hint: string;
}

export type AlertAction = EmailAction | SlackAction;

export type RuleWhen = 'new_group' | 'regression' | 'frequency';

export interface RuleRow {
  id: string;
  env_id: string;
  when: RuleWhen;
  threshold_events: number | null;
  threshold_window_minutes: number | null;
  q: string;
  actions: AlertAction[];
  snooze_minutes: number;
}

/** Why a firing fired: the rule's `when`. */
export type FiringReason = RuleWhen;

/** A rule and a group it may fire for, before its search and its snooze have had their say. */
export interface Candidate {
  rule: RuleRow;
  group_id: string;
  /** Frequency rules: the events of the window that reached the threshold. */
  window_count?: number;
}
