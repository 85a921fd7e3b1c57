// A rule's actions as stored. A Slack incoming-webhook URL is a bearer secret: whoever holds it
// posts to the channel (Slack, "Sending messages using incoming webhooks": "keep it secret"). So
// it is sealed with CAIRN_ENCRYPTION_KEY, bound to its rule (send/slack.ts, whose context the send
// job opens it under; docs/conventions.md "Secrets"), and shown only as a hint: its origin, `/…`
// and its last four characters. Where it may point is the webhook targets' rule (webhooks/endpoints/targets.ts on egress/target-rule.ts), checked here when
// it is set and again where the send job opens its socket.
//
// An update that sends `actions` replaces the list; a Slack action sent with the hint the API
// answered keeps that stored URL, so a client can change a rule's emails without holding its
// Slack URL.
import { AppError } from '../../../app-error.ts';
import type { Config } from '../../../config.ts';
import { keyringFromConfig } from '../../../crypto.ts';
import type { Resolver } from '../../../egress/addresses.ts';
import type { TargetRule } from '../../../egress/target-rule.ts';
import { checkTarget } from '../../webhooks/endpoints/targets.ts';
import { sealSlackUrl } from '../send/slack.ts';
import type { StoredAction } from './queries.ts';

export type ActionInput = { type: 'email'; to: string[] } | { type: 'slack'; url: string };

/** Characters of path and query below which the hint shows none of them. */
const hintMinRest = 12;

/**
 * The hint of a URL: origin, `/…` and the last 4 characters of its path and query (none when they
 * are fewer than 12: four of a short path would give most of it away). Never its user part.
 */
export function slackHint(href: string): string {
  const url = new URL(href);
  const rest = url.pathname + url.search;
  return `${url.origin}/…${rest.length >= hintMinRest ? rest.slice(-4) : ''}`;
}

const refuse = (field: string, message: string) =>
  new AppError('invalid_request', `${field.replace(/^body\./, '')}: ${message}`, {
    details: { fields: [{ field, message }] },
  });

export interface ActionDeps {
  config: Config;
  rule: TargetRule;
  resolve?: Resolver | undefined;
}

/**
 * The actions as stored for rule `ruleId`: each Slack URL checked against the environment's target
 * rule and sealed, or (an update's) the hint of a current action, which keeps that action's URL.
 */
export async function storeActions(
  deps: ActionDeps,
  ruleId: string,
  input: readonly ActionInput[],
  current: readonly StoredAction[] = [],
): Promise<StoredAction[]> {
  const keyring = keyringFromConfig(deps.config);
  const out: StoredAction[] = [];
  for (const [i, action] of input.entries()) {
    if (action.type === 'email') {
      out.push({ type: 'email', to: action.to });
      continue;
    }
    const field = `body.actions.${i}.url`;
    const kept = current.find((c) => c.type === 'slack' && c.url_hint === action.url);
    if (kept) {
      out.push(kept);
      continue;
    }
    if (action.url.includes('…'))
      throw refuse(field, 'this is a masked URL that matches none of the rule’s Slack actions; send the full URL');
    const url = await checkTarget(action.url, deps.rule, deps.resolve, field);
    out.push({ type: 'slack', url_sealed: sealSlackUrl(keyring, ruleId, url), url_hint: slackHint(url) });
  }
  return out;
}
