// Alert rules and their firings (docs/api.md "Alerts"), for the application's server and the CLI.
// A rule's Slack URL comes back masked; in an update, send that masked URL to keep it.
import { envPath, type CairnClient } from './client.ts';

import type { AlertFiring, AlertRule, AlertRuleInput, AlertRuleUpdate } from '../contract/alerts.ts';

export type { AlertFiring, AlertRule, AlertRuleInput, AlertRuleUpdate };

export interface PageOptions {
  pageSize?: number;
  pageToken?: string;
}

// Checked here so a mistyped id is named as such instead of travelling as an odd path segment.
const ruleId = (id: string): string => {
  if (!/^alr_[0-9a-z]{26}$/.test(id)) throw new Error(`"${id}" is not an alert rule id (alr_…)`);
  return id;
};

export class AlertsApi {
  readonly client: CairnClient;

  constructor(client: CairnClient) {
    this.client = client;
  }

  private rules(env: string): string {
    return `${envPath(env)}/alert_rules`;
  }

  private rule(env: string, id: string): string {
    return `${this.rules(env)}/${ruleId(id)}`;
  }

  /** `threshold` for (and only for) `when: "frequency"`. */
  create(env: string, body: AlertRuleInput): Promise<AlertRule> {
    return this.client.request('POST', this.rules(env), { body });
  }

  /** Oldest first. */
  list(env: string, p: PageOptions = {}): Promise<{ alert_rules: AlertRule[]; next_page_token?: string }> {
    return this.client.request('GET', this.rules(env), { query: { page_size: p.pageSize, page_token: p.pageToken } });
  }

  get(env: string, id: string): Promise<AlertRule> {
    return this.client.request('GET', this.rule(env, id));
  }

  /** Only the fields given change; `actions` replaces the list. */
  update(env: string, id: string, patch: AlertRuleUpdate): Promise<AlertRule> {
    return this.client.request('PATCH', this.rule(env, id), { body: patch });
  }

  /** Deletes the rule with its firings. */
  async delete(env: string, id: string): Promise<void> {
    await this.client.request('DELETE', this.rule(env, id));
  }

  /** The rule's firings of the last 30 days with each action's outcome, newest first. */
  listFirings(
    env: string,
    id: string,
    p: PageOptions = {},
  ): Promise<{ firings: AlertFiring[]; next_page_token?: string }> {
    return this.client.request('GET', `${this.rule(env, id)}/firings`, {
      query: { page_size: p.pageSize, page_token: p.pageToken },
    });
  }
}
