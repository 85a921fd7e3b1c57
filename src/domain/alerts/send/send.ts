// A firing's actions (the `alerts.send` job, one per firing): each its mail through the service's
// mailer (src/mail/: SMTP_URL, else the outbox), or its Slack-style POST through the webhooks'
// sender (egress rules of the environment, checked again at send time on the address the socket
// connects to: DNS rebinding gains nothing). Each action has its own outcome: an attempt sends only
// the actions still pending, so a retry never sends again what an earlier attempt sent. At least
// once: an outcome is recorded only after its send ended, so a worker killed mid-send leaves the
// job to be run again, and that message goes out again; the firing itself was recorded once, with
// the batch that caused it (fire/evaluate.ts).
import type { Knex } from 'knex';
import type { Config } from '../../../config.ts';
import { keyringFromConfig } from '../../../crypto.ts';
import { targetRule } from '../../../egress/target-rule.ts';
import type { Logger } from '../../../log.ts';
import type { Mailer } from '../../../mail/index.ts';
import type { Sender } from '../../webhooks/deliveries/send.ts';
import { mailHtml, mailText, slackBody, subject, type MessageInput } from './message.ts';
import { firingActions, recordOutcome, type ActionContext } from './queries.ts';
import { openSlackUrl } from './slack.ts';

/** A Slack-style receiver gets this long to answer. */
export const slackTimeoutMs = 10_000;

export interface SendDeps {
  config: Config;
  db: Knex;
  log: Logger;
  mailer: Mailer;
  sender: Sender;
}

export interface SendJob {
  firing_id: string;
  /** Only this action (a job queued before jobs were one per firing); absent: every pending one. */
  action_index?: number | undefined;
  /** This attempt is the job's last: a failure now settles the action as `failed`. */
  lastAttempt: boolean;
}

/** A send that failed; the job throws it for pg-boss to retry with backoff. */
export class SendFailed extends Error {
  override readonly name = 'SendFailed';
}

/** A failed send's reason (never a stack, never the receiver's text); `permanent`: no retry can help. */
type Failure = { error: string; permanent?: boolean };

/** Sends; answers why it failed, if it did. */
async function attempt(deps: SendDeps, c: ActionContext, m: MessageInput): Promise<Failure | undefined> {
  const action = c.actions[c.action_index];
  if (!action || action.type !== c.type)
    return { error: 'the rule no longer has this action; not sent', permanent: true };
  if (action.type === 'email') {
    try {
      const mail = { to: action.to.join(', '), subject: subject(m), text: mailText(m), html: mailHtml(m) };
      await deps.mailer.send(mail, { envId: c.env_id, mode: c.env_mode });
      return undefined;
    } catch (err) {
      const e = err as { code?: string; responseCode?: number };
      const code = e.responseCode ?? e.code;
      return { error: `the mail server did not take the mail${code ? ` (${code})` : ''}` };
    }
  }
  let url: string;
  try {
    url = new URL(openSlackUrl(keyringFromConfig(deps.config), c.rule_id, action.url_sealed)).href;
  } catch {
    return { error: 'the Slack URL does not open under the service key, or is no URL; set it again', permanent: true };
  }
  const outcome = await deps.sender.send(targetRule(deps.config, c.env_mode), url, {}, slackBody(m));
  if (outcome.ok) return undefined;
  return { error: outcome.error ?? `HTTP ${outcome.statusCode}` };
}

/** One attempt of one pending action; answers its error when it is still pending (to be retried). */
async function sendAction(deps: SendDeps, c: ActionContext, lastAttempt: boolean): Promise<string | undefined> {
  const failure = await attempt(deps, c, { reason: c.reason, rule_name: c.rule_name, facts: c.facts });
  const error = failure?.error;
  const state = !failure ? 'sent' : lastAttempt || failure.permanent ? 'failed' : 'pending';
  await recordOutcome(deps.db, c.firing_id, c.action_index, { state, error: error ?? null });
  if (state === 'failed')
    deps.log.warn({ firing_id: c.firing_id, action_index: c.action_index, error }, 'alert action failed for good');
  return state === 'pending' ? error : undefined;
}

/**
 * One attempt of a firing's pending actions, side by side (see the top of this file); throws when
 * one is still pending, for pg-boss to retry the job with backoff.
 */
export async function sendFiring(deps: SendDeps, job: SendJob): Promise<void> {
  // Gone (pruned, its rule deleted) or settled by an earlier run of this job: nothing to send.
  const pending = (await firingActions(deps.db, job.firing_id)).filter(
    (c) => c.state === 'pending' && (job.action_index === undefined || c.action_index === job.action_index),
  );
  const errors = await Promise.all(pending.map((c) => sendAction(deps, c, job.lastAttempt)));
  const left = errors.filter((e) => e !== undefined);
  if (left.length > 0) throw new SendFailed(`alert action not sent: ${left[0]}`);
}
