// One event of a group (/console/errors/{group}/events/{uid}): the group's title and a link back
// to it, the event as the group page shows its latest (views/event.ts), and links to the group's
// next older and newer events by (event_time, uid), the order its events list in.
import { html, type Html } from '../../html/html.ts';
import type { GroupViewRow } from './group.ts';
import { eventDetails, type ShownEvent } from './event.ts';
import { eventHref } from './group-sections.ts';

export interface EventPageData {
  group: Pick<GroupViewRow, 'id' | 'title' | 'culprit'>;
  event: ShownEvent;
  /** The uids of the group's adjacent events, when there are. */
  newer: string | undefined;
  older: string | undefined;
}

/** "Newer" and "Older"; an end of the list says so in place of its link. */
function adjacent(d: EventPageData): Html {
  const link = (uid: string | undefined, rel: string, label: string, none: string) =>
    uid
      ? html`<a href="${eventHref(d.group.id, uid)}" rel="${rel}">${label}</a>`
      : html`<span class="muted">${none}</span>`;
  return html`<nav class="pager events-nav" aria-label="Events of this group">${link(d.newer, 'prev', '← Newer', 'This is the newest event')}${link(d.older, 'next', 'Older →', 'This is the oldest event')}</nav>`;
}

export function eventPageView(d: EventPageData): Html {
  const g = d.group;
  return html`<p><a href="/console/errors/${g.id}">← ${g.title}</a></p>
<h1 class="title">${g.title}</h1>
<p class="message">${g.culprit}</p>
${adjacent(d)}
<h2>Event <code>${d.event.uid}</code></h2>
${eventDetails(d.event)}`;
}
