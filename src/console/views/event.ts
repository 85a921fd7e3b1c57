// One event as the group page (its latest event) and the event page show it, one rendering for
// both: the exception and when, its frames and the errors linked to it, its user, its tags and its
// breadcrumbs. Values are shown as stored, so as the scrubber left them (docs/api.md "Scrubbing").
import type { EventBody } from '../../contract/error-event.ts';
import { html, type Html } from '../../html/html.ts';
import { timeTag } from '../format.ts';
import { table, tableRow } from './components.ts';
import { stackFrames } from './frames.ts';

export interface ShownEvent {
  uid: string;
  event_time: Date;
  body: Pick<
    EventBody,
    'exception_type' | 'message' | 'release' | 'stack_frames' | 'linked_exceptions' | 'tags' | 'breadcrumbs' | 'sentry'
  >;
}

export const excerpt = (type: string, message: string | undefined): string => `${type}${message ? `: ${message}` : ''}`;

/** The members of a Sentry `user` the console shows, in Sentry's order for its `user` tag. */
const userFields = [
  ['id', 'ID'],
  ['email', 'Email'],
  ['username', 'Username'],
] as const;

const shown = (v: unknown): string | undefined =>
  typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;

/**
 * The user as the event sent it: id, email and username; the IP address only when it is all there
 * is (an SDK that sends `{{auto}}` gives every event one, and it names nobody a reader knows).
 */
export function userFacts(user: Record<string, unknown> | undefined): [string, string][] {
  if (!user) return [];
  const named = userFields.flatMap(([k, label]): [string, string][] => {
    const v = shown(user[k]);
    return v === undefined ? [] : [[label, v]];
  });
  const ip = shown(user.ip_address);
  return named.length > 0 || ip === undefined ? named : [['IP address', ip]];
}

/** The user in a few words (a list's cell): the first of id, email, username and IP address. */
export const userLabel = (user: Record<string, unknown> | undefined): string =>
  userFacts(user)
    .slice(0, 1)
    .map(([label, v]) => (label === 'ID' ? `id ${v}` : v))
    .join('');

function userSection(user: Record<string, unknown> | undefined): Html {
  const facts = userFacts(user);
  if (facts.length === 0) return html`<p class="muted">No user.</p>`;
  return html`<dl class="facts">${facts.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}</dl>`;
}

function tagsTable(tags: Record<string, string>): Html {
  const rows = Object.entries(tags).map(([k, v]) => html`<tr><td><code>${k}</code></td><td>${v}</td></tr>`);
  return rows.length === 0
    ? html`<p class="muted">No tags.</p>`
    : table({ columns: ['Tag', 'Value'], rows, className: 'wrap' });
}

function breadcrumbsTable(crumbs: ShownEvent['body']['breadcrumbs']): Html {
  if (crumbs.length === 0) return html`<p class="muted">No breadcrumbs.</p>`;
  const rows = crumbs.map((c) =>
    tableRow([c.timestamp ?? '', c.category ?? c.type ?? '', { value: c.message ?? '', className: 'message' }]),
  );
  return table({ columns: ['Time', 'Category', 'Message'], rows, className: 'wrap' });
}

/** The event under an `<h2>` its page gives: the facts line, then its sections as `<h3>`s. */
export function eventDetails(e: ShownEvent): Html {
  const b = e.body;
  const release = b.release ? html` · release <code>${b.release}</code>` : '';
  const causes = (b.linked_exceptions ?? []).map(
    (l) =>
      html`<h3>Caused by (${l.source}): ${excerpt(l.exception_type, l.message)}</h3>${stackFrames(l.stack_frames)}`,
  );
  return html`<p class="muted">${excerpt(b.exception_type, b.message)} · ${timeTag(e.event_time)}${release}</p>
${stackFrames(b.stack_frames)}
${causes}
<h3>User</h3>
${userSection(b.sentry?.user)}
<h3>Tags of this event</h3>
${tagsTable(b.tags)}
<h3>Breadcrumbs</h3>
${breadcrumbsTable(b.breadcrumbs)}`;
}
