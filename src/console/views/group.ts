// One error group's page: title, culprit, state and counts, the triage buttons (posting the etag
// the page was rendered with), the last 14 days, the most common tag values over its events, the
// latest event (views/event.ts: frames, causes, user, tags and breadcrumbs), and its events a page
// at a time (views/group-sections.ts). A stale triage comes back here with "Conflict" in an alert.
import type { GroupRow } from '../../domain/errors/groups/queries.ts';
import { transitions, type TriageAction } from '../../domain/errors/groups/state.ts';
import { html, type Html } from '../../html/html.ts';
import { plural, timeTag } from '../format.ts';
import { chartDays, chartSizes, occurrenceChart } from './chart.ts';
import { alert, badge, disabledIf, dotted, postForm, readOnlyNote } from './components.ts';
import { eventDetails, type ShownEvent } from './event.ts';
import { eventHref, eventsSection, tagSummary, type ListedEvent, type TagSummary } from './group-sections.ts';

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

export interface GroupData {
  group: GroupViewRow;
  /** Events per UTC day, the last being `now`'s. */
  daily: readonly number[];
  now: Date;
  /** Undefined once the group's events are pruned. */
  latest: ShownEvent | undefined;
  /** The most common values of each tag over the group's events (error_group_tags). */
  tags: readonly TagSummary[];
  /** A page of the group's events, newest first, and the token of the next (older) one. */
  events: readonly ListedEvent[];
  nextToken: string | undefined;
  /** The events shown are the newest (no token was given). */
  firstPage: boolean;
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

function latestEvent(e: ShownEvent | undefined, groupId: string): Html {
  if (!e)
    return html`<h2>Latest event</h2>
<p class="muted">The events of this group have been pruned.</p>`;
  return html`<h2>Latest event</h2>
<p><a href="${eventHref(groupId, e.uid)}">Open this event</a></p>
${eventDetails(e)}`;
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
${tagSummary(d.tags)}
${latestEvent(d.latest, g.id)}
${eventsSection({ groupId: g.id, events: d.events, nextToken: d.nextToken, firstPage: d.firstPage })}`;
}
