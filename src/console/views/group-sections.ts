// The group page's sections over all its events: "Tags", the most common values of each tag key
// with their count of events and share of the events that carried the key (as Sentry's tag
// summary), and "Events", the group's events newest first, a page at a time, each linking to its
// own page.
import type { EventBody } from '../../contract/error-event.ts';
import { html, type Html } from '../../html/html.ts';
import { plural, timeTag } from '../format.ts';
import { table, tableRow } from './components.ts';
import { excerpt, userLabel } from './event.ts';

/** A tag key's most common values, and how many events carried the key at all. */
export interface TagSummary {
  key: string;
  total: number;
  values: { value: string; count: number }[];
}

export interface ListedEvent {
  uid: string;
  event_time: Date;
  body: Pick<EventBody, 'exception_type' | 'message' | 'release' | 'sentry'>;
}

export const eventHref = (groupId: string, uid: string): string => `/console/errors/${groupId}/events/${uid}`;

/** A share of a total, in whole percent; a share that rounds to none or to all says it is not. */
function percent(count: number, total: number): string {
  const p = Math.round((count / total) * 100);
  if (p === 0 && count > 0) return '<1%';
  return p === 100 && count < total ? '>99%' : `${p}%`;
}

function facet(t: TagSummary): Html {
  const shownCount = t.values.reduce((n, v) => n + v.count, 0);
  const other = t.total - shownCount;
  // The count is said in words ("7 events"), so that a value ending in a number ("Chrome 131")
  // does not run into it when read aloud or at a glance.
  const share = (n: number) => `${plural(n, 'event')} · ${percent(n, t.total)}`;
  const values = t.values.map(
    (v) => html`<li><span class="value">${v.value}</span> <span class="muted">${share(v.count)}</span></li>`,
  );
  const rest = other > 0 ? html`<li class="muted">other values ${share(other)}</li>` : '';
  return html`<tr><th scope="row"><code>${t.key}</code><br><span class="muted">${plural(t.total, 'event')}</span></th>
<td><ul class="facet">${values}${rest}</ul></td></tr>`;
}

export function tagSummary(tags: readonly TagSummary[]): Html {
  const body =
    tags.length === 0
      ? html`<p class="muted">No tags.</p>`
      : table({ columns: ['Tag', 'Most common values'], rows: tags.map(facet), className: 'wrap' });
  return html`<h2>Tags</h2>
${body}`;
}

/** The pager of the events: older ones, and back to the newest from a later page. */
function eventsPager(groupId: string, nextToken: string | undefined, firstPage: boolean): Html | '' {
  if (!nextToken && firstPage) return '';
  const newest = firstPage ? '' : html`<a href="/console/errors/${groupId}#events">Newest events</a>`;
  const older = nextToken ? html`<a href="/console/errors/${groupId}?after=${nextToken}#events">Older events</a>` : '';
  return html`<nav class="pager" aria-label="Pages of events">${newest}${older}</nav>`;
}

export function eventsSection(o: {
  groupId: string;
  events: readonly ListedEvent[];
  nextToken: string | undefined;
  firstPage: boolean;
}): Html {
  const rows = o.events.map((e) =>
    tableRow([
      html`<a href="${eventHref(o.groupId, e.uid)}">${timeTag(e.event_time)}</a>
<div class="message">${excerpt(e.body.exception_type, e.body.message)}</div>`,
      userLabel(e.body.sentry?.user),
      e.body.release ? html`<code>${e.body.release}</code>` : '',
    ]),
  );
  const list =
    rows.length === 0
      ? html`<p class="muted">No events${o.firstPage ? '' : ' on this page'}.</p>`
      : table({ columns: ['Event', 'User', 'Release'], rows, className: 'wrap' });
  return html`<h2 id="events">Events</h2>
${list}
${eventsPager(o.groupId, o.nextToken, o.firstPage)}`;
}
