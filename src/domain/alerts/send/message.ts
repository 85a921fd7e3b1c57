// What a firing says (docs/api.md "Alerts", "What a person receives"): a mail's subject, its plain
// text and HTML parts, and a Slack-style message, all made from the firing's facts (the stored,
// scrubbed group: fire/facts.ts) and nothing else. Pure: golden-tested in test/alerts/message.test.ts.
import { esc } from '../../../html/html.ts';
import type { FiringFacts } from '../fire/facts.ts';
import type { FiringReason } from '../fire/rules.ts';

export interface MessageInput {
  reason: FiringReason;
  rule_name: string;
  facts: FiringFacts;
}

/** A subject's pieces stay on one line: a title's line breaks and controls become spaces. */
const oneLine = (s: string, max: number): string => {
  const flat = s.replace(/[\p{Cc}\p{Zl}\p{Zp}]+/gu, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

/** "New error in prod", "Regression in prod", "Frequent error in prod". */
export function headline(m: MessageInput): string {
  const env = oneLine(m.facts.environment, 100);
  switch (m.reason) {
    case 'new_group':
      return `New error in ${env}`;
    case 'regression':
      return `Regression in ${env}`;
    case 'frequency':
      return `Frequent error in ${env}`;
  }
}

export const subject = (m: MessageInput): string => `[Cairn] ${headline(m)}: ${oneLine(m.facts.title, 200)}`;

/** A stored time as ISO 8601 in UTC (facts keep Postgres's JSON form of timestamptz). */
const iso = (s: string): string => {
  const d = new Date(s);
  return Number.isNaN(d.getTime()) ? s : d.toISOString();
};

/** The facts as label/value lines, in the order every message shows them. */
export function factLines(m: MessageInput): [string, string][] {
  const f = m.facts;
  const count: [string, string] =
    m.reason === 'frequency' && f.window_minutes !== null
      ? [`Events in the last ${f.window_minutes} min`, String(f.count)]
      : ['Events', String(f.count)];
  return [
    ['Environment', f.environment],
    count,
    ['Release', f.release === '' ? '(none)' : f.release],
    ['First seen', iso(f.first_seen)],
    ['Last seen', iso(f.last_seen)],
    ['Rule', m.rule_name],
  ];
}

export function mailText(m: MessageInput): string {
  const lines = [headline(m), '', m.facts.title];
  if (m.facts.culprit) lines.push(`at ${m.facts.culprit}`);
  lines.push('', ...factLines(m).map(([k, v]) => `${k}: ${v}`), '', `Open it in the console: ${m.facts.link}`, '');
  return lines.join('\n');
}

/** Every value escaped (src/html/html.ts `esc`): a title is whatever an SDK sent. */
export function mailHtml(m: MessageInput): string {
  const rows = factLines(m)
    .map(([k, v]) => `<tr><th align="left">${esc(k)}</th><td>${esc(v)}</td></tr>`)
    .join('');
  const culprit = m.facts.culprit ? `<p>at <code>${esc(m.facts.culprit)}</code></p>` : '';
  return (
    `<!doctype html><html><body><h2>${esc(headline(m))}</h2><p><strong>${esc(m.facts.title)}</strong></p>${culprit}` +
    `<table>${rows}</table><p><a href="${esc(m.facts.link)}">Open it in the console</a></p></body></html>`
  );
}

/**
 * Text as Slack reads it: `&`, `<` and `>` escaped (Slack's "Formatting text": the three control
 * characters), so an error's title cannot make a link or a `<!channel>` mention; an `@` that starts
 * a word is followed by a word joiner, so `@channel`/`@all` in a title pings no one on Mattermost or
 * Rocket.Chat (an address's or a release's `@`, inside a word, is left as it is).
 */
const slackSafe = (s: string): string =>
  s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/(^|[^\w@])@(?=[\w.-])/g, '$1@\u2060');

/** The incoming-webhook body (Slack, Mattermost and Rocket.Chat all take `{"text": …}`). */
export function slackBody(m: MessageInput): string {
  const lines = [`*${slackSafe(headline(m))}*`, slackSafe(oneLine(m.facts.title, 500))];
  if (m.facts.culprit) lines.push(`at ${slackSafe(oneLine(m.facts.culprit, 300))}`);
  lines.push(...factLines(m).map(([k, v]) => `${k}: ${slackSafe(v)}`), slackSafe(m.facts.link));
  return JSON.stringify({ text: lines.join('\n') });
}
