// The alerts page: the environment's rules (what each watches for, whom it tells, its last firing
// with a link to the group), a "Delete" per rule, and the form that creates one. A Slack URL shows
// only as the API's hint. A key without observability:write sees the controls disabled; a refused
// rule comes back with the reasons above the form and what was typed kept (the Slack URL, a
// secret, is typed again).
import { alertLimits, type AlertRule } from '../../contract/alerts.ts';
import { html, type Html } from '../../html/html.ts';
import { timeTag } from '../format.ts';
import { alert, badge, disabledIf, empty, postForm, readOnlyNote, table, tableRow } from './components.ts';

export interface LastFiring {
  time: Date;
  groupId: string;
  title: string;
}

export interface AlertRuleItem {
  rule: AlertRule;
  last: LastFiring | undefined;
}

/** What the form holds, as typed (every field a string). */
export interface AlertFormValues {
  name: string;
  when: string;
  events: string;
  window: string;
  q: string;
  emails: string;
  snooze: string;
}

export const emptyAlertForm: AlertFormValues = {
  name: '',
  when: 'new_group',
  events: '',
  window: '',
  q: '',
  emails: '',
  snooze: String(alertLimits.defaultSnoozeMinutes),
};

export interface AlertsData {
  rules: readonly AlertRuleItem[];
  csrf: string;
  /** The key has observability:write. */
  writable: boolean;
  form: AlertFormValues;
  notice?: string | undefined;
  /** Why the rule was refused, one line each. */
  problems?: readonly string[] | undefined;
}

const kinds: [string, string][] = [
  ['new_group', 'A new error group appears'],
  ['regression', 'A resolved error group comes back'],
  ['frequency', 'An error group has many events'],
];

function watches(r: AlertRule): string {
  if (r.threshold) return `${r.threshold.events.toLocaleString('en')}+ events within ${r.threshold.window_minutes} min`;
  return r.when === 'new_group' ? 'A new error group' : 'A resolved group comes back';
}

const quiet = (minutes: number): string =>
  minutes === 0 ? 'told every time' : `quiet ${minutes.toLocaleString('en')} min per group`;

/** The rule: its name, what it watches for, and its "Delete" (in this cell, so a phone keeps room for the rest). */
function ruleCell(r: AlertRule, d: AlertsData): Html {
  const search = r.q ? html` · matching <code>${r.q}</code>` : '';
  const state = r.state === 'disabled' ? html` ${badge('disabled')}` : '';
  return html`<span class="title">${r.name}</span>${state}
<div class="muted">${watches(r)}${search} · ${quiet(r.snooze_minutes)}</div>
${deleteButton(r, d)}`;
}

const tells = (r: AlertRule): Html =>
  html`${r.actions.map((a) =>
    a.type === 'email' ? html`<div>${a.to.join(', ')}</div>` : html`<div>Slack <code>${a.url}</code></div>`,
  )}`;

const lastCell = (last: LastFiring | undefined): Html =>
  last
    ? html`${timeTag(last.time)}<div><a href="/console/errors/${last.groupId}">${last.title}</a></div>`
    : html`<span class="muted">never</span>`;

function deleteButton(r: AlertRule, d: AlertsData): Html {
  return postForm({
    action: `/console/alerts/${r.id}/delete`,
    csrf: d.csrf,
    className: 'inline delete',
    body: html`<button type="submit" aria-label="Delete the rule ${r.name}"${disabledIf(!d.writable)}>Delete</button>`,
  });
}

function rulesTable(d: AlertsData): Html {
  if (d.rules.length === 0) return empty('No alert rules yet: nobody is told when an error needs them.');
  return table({
    caption: `Rules, oldest first (at most ${alertLimits.rulesPerEnv})`,
    columns: ['Rule', 'Tells', 'Last firing'],
    rows: d.rules.map(({ rule, last }) => tableRow([ruleCell(rule, d), tells(rule), lastCell(last)])),
    className: 'wrap',
  });
}

/** A labelled control; `help` is read with it (aria-describedby). */
function field(id: string, label: string, control: Html, help?: string): Html {
  const described = help ? html`<p class="muted" id="${id}-help">${help}</p>` : '';
  return html`<label for="${id}">${label}</label>${control}${described}`;
}

const text = html`type="text" autocomplete="off" spellcheck="false"`;
const number = (min: number, max: number) => html`type="number" inputmode="numeric" min="${min}" max="${max}"`;

function ruleForm(d: AlertsData): Html {
  const f = d.form;
  const off = disabledIf(!d.writable);
  /** An input of the form, named `name`, with the id `rule-<name>`. */
  const input = (name: keyof AlertFormValues | 'slack', value: string, attrs: Html, help = false) =>
    html`<input id="rule-${name}" name="${name}" value="${value}" ${attrs}${help ? html` aria-describedby="rule-${name}-help"` : ''}${off}>`;
  const options = kinds.map(
    ([value, label]) => html`<option value="${value}"${f.when === value ? html` selected` : ''}>${label}</option>`,
  );
  const body = html`${field('rule-name', 'Name', input('name', f.name, html`${text} maxlength="${alertLimits.nameChars}" required`))}
${field('rule-when', 'When', html`<select id="rule-when" name="when"${off}>${options}</select>`)}
<fieldset><legend>Threshold, for “many events”</legend>
${field('rule-events', 'Events', input('events', f.events, number(1, alertLimits.thresholdEvents)))}
${field('rule-window', 'Within minutes', input('window', f.window, number(1, alertLimits.windowMinutes)))}
</fieldset>
${field('rule-q', 'Only errors matching', input('q', f.q, text, true), 'The search of the errors page (release:, service:, a tag…); empty: every error.')}
${field('rule-emails', 'Email addresses', input('emails', f.emails, text, true), `Separated by commas or spaces, at most ${alertLimits.emailsPerAction}.`)}
${field('rule-slack', 'Slack incoming-webhook URL', input('slack', '', html`type="url" autocomplete="off" spellcheck="false"`, true), 'Kept sealed; shown only masked.')}
${field('rule-snooze', 'Quiet minutes per error group', input('snooze', f.snooze, number(0, alertLimits.snoozeMinutes), true), 'At most one notification per group and rule within this time; 0: every time.')}
<button type="submit" class="primary"${off}>Create rule</button>`;
  return postForm({ action: '/console/alerts', csrf: d.csrf, className: 'rule-form', body });
}

export function alertsView(d: AlertsData): Html {
  const problems = d.problems?.length
    ? alert('error', html`<p>The rule was not created:</p>${d.problems.map((p) => html`<p>${p}</p>`)}`)
    : '';
  return html`<h1>Alerts</h1>
${d.notice ? alert('ok', d.notice) : ''}
${d.writable ? '' : readOnlyNote('observability:write', true)}
${rulesTable(d)}
<h2>New rule</h2>
${problems}
${ruleForm(d)}`;
}
