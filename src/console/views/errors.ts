// The errors page: the environment's error groups, most recently seen first, filtered by state and
// service, each with its events of the last 14 days as a small chart.
import type { GroupRow, GroupState } from '../../domain/errors/groups/queries.ts';
import { html, type Html } from '../../html/html.ts';
import { timeTag } from '../format.ts';
import { chartDays, chartSizes, occurrenceChart } from './chart.ts';
import { empty, filters, pager, table, tableRow } from './components.ts';

/** The state filters: the query's `state`, the groups it lists, and its label. */
export const errorStates: readonly [string, GroupState | undefined, string][] = [
  ['unresolved', 'unresolved', 'Unresolved'],
  ['acknowledged', 'acknowledged', 'Acknowledged'],
  ['resolved', 'resolved', 'Resolved'],
  ['all', undefined, 'All'],
];

export type ErrorsGroup = Pick<
  GroupRow,
  'id' | 'title' | 'culprit' | 'service_name' | 'occurrence_count' | 'last_seen_time'
> & { daily: readonly number[] };

export interface ErrorsData {
  /** One of errorStates. */
  state: (typeof errorStates)[number];
  service: string | undefined;
  groups: readonly ErrorsGroup[];
  /** The last day of the charts. */
  now: Date;
  /** The position of the next page, if there is one. */
  nextToken: string | undefined;
}

const errorsHref = (state: string, service?: string, after?: string): string =>
  `/console/errors?${new URLSearchParams({ state, ...(service ? { service } : {}), ...(after ? { after } : {}) })}`;

function groupRow(g: ErrorsGroup, state: string, now: Date): Html {
  return tableRow([
    html`<a class="title" href="/console/errors/${g.id}">${g.title}</a><div class="message">${g.culprit}</div>`,
    html`<a href="${errorsHref(state, g.service_name)}">${g.service_name}</a>`,
    occurrenceChart(g.daily, now, chartSizes.small),
    { value: Number(g.occurrence_count).toLocaleString('en'), className: 'num' },
    timeTag(g.last_seen_time),
  ]);
}

function groupsTable(d: ErrorsData): Html {
  const [id, , label] = d.state;
  if (d.groups.length === 0) {
    const which = id === 'all' ? '' : label.toLowerCase() + ' ';
    return empty(html`No ${which}errors${d.service ? html` in ${d.service}` : ''}.`);
  }
  return table({
    caption: `${label} error groups, most recently seen first`,
    columns: ['Error', 'Service', `Last ${chartDays} days`, { label: 'Events', num: true }, 'Last seen'],
    rows: d.groups.map((g) => groupRow(g, id, d.now)),
  });
}

export function errorsView(d: ErrorsData): Html {
  const [id] = d.state;
  const chips = errorStates.map(([s, , label]) => ({ label, href: errorsHref(s, d.service), current: s === id }));
  const service = d.service
    ? html`<p class="muted">Service ${d.service} · <a href="${`/console/errors?state=${id}`}">all services</a></p>`
    : '';
  const next = d.nextToken ? errorsHref(id, d.service, d.nextToken) : undefined;
  return html`<h1>Errors</h1>
${filters('State', chips)}
${service}
${groupsTable(d)}
${pager(next, 'Older errors')}`;
}
