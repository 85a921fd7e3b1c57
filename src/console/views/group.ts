// One error group's page: title, culprit, state and counts, the triage buttons (posting the etag
// the page was rendered with), the last 14 days, and the latest event: frames, causes, tags and
// breadcrumbs. A stale triage comes back here with "Conflict" in an alert.
import type { EventBody } from '../../contract/error-event.ts';
import type { GroupRow } from '../../domain/errors/groups/queries.ts';
import { transitions, type TriageAction } from '../../domain/errors/groups/state.ts';
import { html, type Html } from '../../html/html.ts';
import { plural, timeTag } from '../format.ts';
import { chartDays, chartSizes, occurrenceChart } from './chart.ts';
import { alert, badge, disabledIf, dotted, postForm, readOnlyNote, table, tableRow } from './components.ts';
import { stackFrames } from './frames.ts';

export const triageActions: readonly [TriageAction, string][] = [
  ['acknowledge', 'Acknowledge'],
  ['resolve', 'Resolve'],
  ['reopen', 'Reopen'],
];

export type GroupViewRow = Pick<
  GroupRow,
  | 'id'
  | 'title'
  | 'culprit'
  | 'state'
  | 'etag'
  | 'occurrence_count'
  | 'first_seen_time'
  | 'last_seen_time'
  | 'service_name'
  | 'last_release'
>;

export interface LatestEvent {
  event_time: Date;
  body: Pick<
    EventBody,
    'exception_type' | 'message' | 'release' | 'stack_frames' | 'linked_exceptions' | 'tags' | 'breadcrumbs'
  >;
}

export interface GroupData {
  group: GroupViewRow;
  /** Events per UTC day, the last being `now`'s. */
  daily: readonly number[];
  now: Date;
  /** Undefined once the group's events are pruned. */
  latest: LatestEvent | undefined;
  csrf: string;
  /** The key has observability:write. */
  writable: boolean;
  /** A triage found the group changed (its page comes back with 409). */
  conflict: boolean;
}

function triageForm(g: GroupViewRow, csrf: string, writable: boolean): Html {
  const buttons = triageActions.map(([action, label]) => {
    const off = !writable || !transitions[action].from.includes(g.state);
    return html`<button type="submit" name="action" value="${action}"${disabledIf(off)}>${label}</button>`;
  });
  return postForm({
    action: `/console/errors/${g.id}/triage`,
    csrf,
    className: 'actions',
    body: html`<input type="hidden" name="etag" value="${g.etag}">
${buttons}
${writable ? '' : readOnlyNote('observability:write')}`,
  });
}

const excerpt = (type: string, message: string | undefined) => `${type}${message ? `: ${message}` : ''}`;

function tagsTable(tags: Record<string, string>): Html {
  const rows = Object.entries(tags).map(([k, v]) => html`<tr><td><code>${k}</code></td><td>${v}</td></tr>`);
  return rows.length === 0 ? html`<p class="muted">No tags.</p>` : table({ columns: ['Tag', 'Value'], rows });
}

function breadcrumbsTable(crumbs: LatestEvent['body']['breadcrumbs']): Html {
  if (crumbs.length === 0) return html`<p class="muted">No breadcrumbs.</p>`;
  const rows = crumbs.map((c) =>
    tableRow([c.timestamp ?? '', c.category ?? c.type ?? '', { value: c.message ?? '', className: 'message' }]),
  );
  return table({ columns: ['Time', 'Category', 'Message'], rows });
}

function latestEvent(e: LatestEvent | undefined): Html {
  if (!e) return html`<p class="muted">The events of this group have been pruned.</p>`;
  const b = e.body;
  const release = b.release ? html` · release <code>${b.release}</code>` : '';
  const causes = (b.linked_exceptions ?? []).map(
    (l) =>
      html`<h3>Caused by (${l.source}): ${excerpt(l.exception_type, l.message)}</h3>${stackFrames(l.stack_frames)}`,
  );
  return html`<h2>Latest event</h2>
<p class="muted">${excerpt(b.exception_type, b.message)} · ${timeTag(e.event_time)}${release}</p>
${stackFrames(b.stack_frames)}
${causes}
<h2>Tags</h2>
${tagsTable(b.tags)}
<h2>Breadcrumbs</h2>
${breadcrumbsTable(b.breadcrumbs)}`;
}

const conflictAlert = (state: string): Html =>
  alert(
    'error',
    html`<strong>Conflict:</strong> ${
      `this error changed since the page was loaded, or that action does not apply to it now (it is ${state}). ` +
      'Nothing was changed; review it below and try again.'
    }`,
  );

function summary(g: GroupViewRow): Html {
  const facts = dotted([
    badge(g.state),
    plural(Number(g.occurrence_count), 'event'),
    html`first seen ${timeTag(g.first_seen_time)}`,
    html`last seen ${timeTag(g.last_seen_time)}`,
    g.service_name && html`service ${g.service_name}`,
    g.last_release && html`release <code>${g.last_release}</code>`,
  ]);
  return html`<p>${facts}</p>`;
}

export function groupView(d: GroupData): Html {
  const g = d.group;
  return html`<p><a href="/console/errors">← Errors</a></p>
${d.conflict ? conflictAlert(g.state) : ''}
<h1 class="title">${g.title}</h1>
<p class="message">${g.culprit}</p>
${summary(g)}
${triageForm(g, d.csrf, d.writable)}
<h2>Last ${chartDays} days</h2>
${occurrenceChart(d.daily, d.now, chartSizes.large)}
${latestEvent(d.latest)}`;
}
