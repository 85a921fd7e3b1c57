// Alert test helpers: a real SMTP server that keeps each mail's subject and its text and HTML
// parts, rules written straight into alert_rules (as the rules' API stores them), the worker
// in-process for the queues alerts need, and reads of what fired.
import { startMailServer as startIdentityMailServer, type MailServer } from '../identity/support.ts';
import { newId } from '../../src/ids.ts';
import { queues, type AppRegistry } from '../../src/queues.ts';
import { sealSlackUrl } from '../../src/domain/alerts/send/slack.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { SendOptions } from '../../src/domain/webhooks/deliveries/send.ts';
import { startWorker, type Handlers, type WorkerHandle } from '../../src/worker.ts';
import { alertsSend } from '../../workers/alerts-send.ts';
import { handlers } from '../../workers/handlers.ts';
import { testKeyring } from '../support/config.ts';
import type { Harness } from '../support/harness.ts';

export interface ReceivedMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** Quoted-printable as nodemailer writes it: soft line breaks and =XX escapes. */
const decodeQp = (body: string): string =>
  Buffer.from(
    body
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');

/** A part's headers (unfolded) and its decoded body. */
function splitPart(raw: string): { header: (name: string) => string; body: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  const enc = header('Content-Transfer-Encoding');
  let body = raw.slice(split + 4);
  if (/quoted-printable/i.test(enc)) body = decodeQp(body);
  else if (/base64/i.test(enc)) body = Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return { header, body: body.replace(/\r\n/g, '\n') };
}

/** A nodemailer message: its subject (RFC 2047 words decoded) and its text and HTML alternatives. */
function parseMail(raw: string): ReceivedMail {
  const top = splitPart(raw);
  const subject = top
    .header('Subject')
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?Q\?([^?]*)\?=/gi, (_m, q: string) => decodeQp(q.replace(/_/g, ' ')));
  const boundary = /boundary="?([^";]+)"?/i.exec(top.header('Content-Type'))?.[1];
  const parts = boundary
    ? raw
        .split(`--${boundary}`)
        .slice(1, -1)
        .map((p) => splitPart(p.replace(/^\r\n/, '')))
    : [top];
  const of = (type: string) => parts.find((p) => p.header('Content-Type').startsWith(type))?.body ?? '';
  return { to: top.header('To'), subject, text: of('text/plain'), html: of('text/html') };
}

/** A real SMTP server keeping each mail's text and HTML parts (identity's server, with this parser). */
export type AlertMailServer = MailServer<ReceivedMail>;
export const startMailServer = (): Promise<AlertMailServer> => startIdentityMailServer(parseMail);

export interface RuleInput {
  when: 'new_group' | 'regression' | 'frequency';
  q?: string;
  threshold_events?: number;
  threshold_window_minutes?: number;
  snooze_minutes?: number;
  email?: string[];
  slack?: string;
  name?: string;
}

/** A rule as the rules' API stores it: the Slack URL sealed to the rule (send/slack.ts). */
export async function insertRule(h: Harness, env: CreatedEnv, r: RuleInput): Promise<string> {
  const id = newId('alr');
  const actions: unknown[] = [];
  if (r.email) actions.push({ type: 'email', to: r.email });
  if (r.slack)
    actions.push({ type: 'slack', url_sealed: sealSlackUrl(testKeyring(), id, r.slack), url_hint: '…/hook' });
  await h.db('alert_rules').insert({
    id,
    env_id: env.env.id,
    name: r.name ?? `${r.when} rule`,
    when: r.when,
    threshold_events: r.threshold_events ?? null,
    threshold_window_minutes: r.threshold_window_minutes ?? null,
    q: r.q ?? '',
    actions: JSON.stringify(actions),
    ...(r.snooze_minutes === undefined ? {} : { snooze_minutes: r.snooze_minutes }),
  });
  return id;
}

export interface FiringRow {
  id: string;
  rule_id: string;
  group_id: string;
  reason: string;
  facts: Record<string, unknown>;
}

export const firingsOf = (h: Harness, ruleId: string): Promise<FiringRow[]> =>
  h
    .db('alert_firings')
    .where({ rule_id: ruleId })
    .orderBy('time')
    .select('id', 'rule_id', 'group_id', 'reason', 'facts');

export interface ActionRow {
  firing_id: string;
  action_index: number;
  type: string;
  state: string;
  attempt_count: number;
  error: string | null;
}

export const actionsOf = (h: Harness, firingId: string): Promise<ActionRow[]> =>
  h
    .db('alert_firing_actions')
    .where({ firing_id: firingId })
    .orderBy('action_index')
    .select('firing_id', 'action_index', 'type', 'state', 'attempt_count', 'error');

const names = ['errors.ingest', 'alerts.send', 'alerts.prune'] as const;
type Mine = Pick<AppRegistry, (typeof names)[number]>;

/** A worker for the ingest and the alerts' queues; `send` gives the Slack sender its own options. */
export async function startAlertWorker(h: Harness, send: SendOptions = {}): Promise<WorkerHandle<Mine>> {
  const registry = Object.fromEntries(names.map((n) => [n, queues[n]])) as Mine;
  const mine = {
    ...Object.fromEntries(names.map((n) => [n, handlers[n]])),
    'alerts.send': alertsSend(send),
  } as unknown as Handlers<Mine>;
  return startWorker(h.config, registry, mine, { pollingIntervalSeconds: 0.5 });
}
