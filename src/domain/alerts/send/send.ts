// Firings' actions (the `alerts.send` job, one per stored batch's firings): each its mail through the service's
// mailer (src/mail/: SMTP_URL, else the outbox), or its Slack-style POST through the webhooks'
// sender (egress rules of the environment, checked again at send time on the address the socket
// connects to: DNS rebinding gains nothing). Each action has its own outcome: an attempt sends only
// the actions still pending, so a retry never sends again what an earlier attempt sent. At least
// once: an outcome is recorded only after its send ended, so a worker killed mid-send leaves the
// job to be run again, and that message goes out again; the firing itself was recorded once, with
// the batch that caused it (fire/evaluate.ts).
import type { Knex } from 'knex';
import type { Config } from '../../../config.ts';
import { settleAtMost } from '../../../at-most.ts';
import { keyringFromConfig } from '../../../crypto.ts';
import { targetRule } from '../../../egress/target-rule.ts';
import type { Logger } from '../../../log.ts';
import type { Mail, Mailer } from '../../../mail/index.ts';
import type { Sender } from '../../webhooks/deliveries/send.ts';
import { mailHtml, mailText, slackBody, subject, type MessageInput } from './message.ts';
import { firingsActions, recordOutcomes, type ActionContext } from './queries.ts';
import { openSlackUrl } from './slack.ts';

/** A Slack-style receiver gets this long to answer. */
export const slackTimeoutMs = 10_000;

/** Slack-style posts of a fetch going out at once. */
const sendsAtOnce = 32;

export interface SendDeps {
  config: Config;
  db: Knex;
  log: Logger;
  mailer: Mailer;
  sender: Sender;
}

export interface SendJob {
  firing_id: string;
  /** Only this action (a job queued when jobs were one per action); absent: every pending one. */
  action_index?: number | undefined;
  /** This attempt is the job's last: a failure now settles the action as `failed`. */
  lastAttempt: boolean;
}

/** A failed send's reason (never a stack, never the receiver's text); `permanent`: no retry can help. */
type Failure = { error: string; permanent?: boolean };

/** What an action's attempt turned out: undefined when sent, else why not. */
type Attempted = { c: ActionContext; failure: Failure | undefined };

/** The mail of an email action (or why it cannot be sent). */
function mailOf(c: ActionContext, m: MessageInput): { mail: Mail } | Failure {
  const action = c.actions[c.action_index];
  if (!action || action.type !== c.type || action.type !== 'email')
    return { error: 'the rule no longer has this action; not sent', permanent: true };
  return { mail: { to: action.to.join(', '), subject: subject(m), text: mailText(m), html: mailHtml(m) } };
}

/** A Slack action's POST; answers why it failed, if it did. */
async function postSlack(deps: SendDeps, c: ActionContext, m: MessageInput): Promise<Failure | undefined> {
  const action = c.actions[c.action_index];
  if (!action || action.type !== c.type || action.type !== 'slack')
    return { error: 'the rule no longer has this action; not sent', permanent: true };
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

/** The mails of these email actions, sent together (the outbox: one statement). */
async function sendMails(deps: SendDeps, actions: readonly ActionContext[]): Promise<Attempted[]> {
  const made = actions.map((c) => ({ c, made: mailOf(c, messageOf(c)) }));
  const ready = made.flatMap(({ c, made: m }) =>
    'mail' in m ? [{ c, mail: m.mail, env: { envId: c.env_id, mode: c.env_mode } }] : [],
  );
  const errors = await deps.mailer.sendAll(ready);
  const failed = new Map(ready.map((r, i) => [r.c, errors[i]]));
  return made.map(({ c, made: m }) => {
    if (!('mail' in m)) return { c, failure: m };
    const err = failed.get(c) as { code?: string; responseCode?: number } | undefined;
    if (!err) return { c, failure: undefined };
    const code = err.responseCode ?? err.code;
    return { c, failure: { error: `the mail server did not take the mail${code ? ` (${code})` : ''}` } };
  });
}

const messageOf = (c: ActionContext): MessageInput => ({ reason: c.reason, rule_name: c.rule_name, facts: c.facts });

/**
 * One attempt of the pending actions of a fetch's firings (see the top of this file): mails
 * together, Slack posts side by side, every outcome recorded in one statement once all ended.
 * Answers, per job in order, the error of an action still pending (its job to be retried with
 * backoff), or undefined.
 */
export async function sendFirings(deps: SendDeps, jobs: readonly SendJob[]): Promise<(string | undefined)[]> {
  const contexts = await firingsActions(
    deps.db,
    jobs.map((j) => j.firing_id),
  );
  // Gone (pruned, its rule deleted) or settled by an earlier run of its job: nothing to send.
  const pending = jobs.map((job) =>
    contexts.filter(
      (c) =>
        c.firing_id === job.firing_id &&
        c.state === 'pending' &&
        (job.action_index === undefined || c.action_index === job.action_index),
    ),
  );
  const all = [...new Set(pending.flat())];
  const [mails, posts] = await Promise.all([
    sendMails(
      deps,
      all.filter((c) => c.type === 'email'),
    ),
    settleAtMost(
      sendsAtOnce,
      all.filter((c) => c.type !== 'email'),
      async (c) => ({ c, failure: await postSlack(deps, c, messageOf(c)) }),
    ).then((rs) =>
      rs.map((r) => {
        if (r.status === 'rejected') throw r.reason;
        return r.value;
      }),
    ),
  ]);
  const failures = new Map([...mails, ...posts].map((a) => [a.c, a.failure]));
  const outcomes = jobs.flatMap((job, i) =>
    pending[i]!.map((c) => {
      const failure = failures.get(c);
      const state = !failure ? 'sent' : job.lastAttempt || failure.permanent ? 'failed' : 'pending';
      return { c, state, error: failure?.error ?? null } as const;
    }),
  );
  await recordOutcomes(
    deps.db,
    outcomes.map((o) => ({ firing_id: o.c.firing_id, action_index: o.c.action_index, state: o.state, error: o.error })),
  );
  for (const o of outcomes)
    if (o.state === 'failed')
      deps.log.warn(
        { firing_id: o.c.firing_id, action_index: o.c.action_index, error: o.error },
        'alert action failed for good',
      );
  return pending.map(
    (actions) => outcomes.find((o) => actions.includes(o.c) && o.state === 'pending')?.error ?? undefined,
  );
}
