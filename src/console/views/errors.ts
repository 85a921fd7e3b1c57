// The errors page: the environment's error groups, most recently seen first, filtered by state and
// service, each with its events of the last 14 days as a small chart, and a checkbox to triage the
// checked rows at once (views/bulk.ts). The table scrolls inside its own box, so a phone-wide page
// never scrolls sideways.
import type { GroupRow, GroupState } from '../../domain/errors/groups/queries.ts';
import { html, type Html } from '../../html/html.ts';
import { timeTag } from '../format.ts';
import { chartDays, chartSizes, occurrenceChart } from './chart.ts';
import { bulkForm, bulkReport, selectCell, type BulkReport } from './bulk.ts';
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
  'id' | 'title' | 'culprit' | 'service_name' | 'occurrence_count' | 'last_seen_time' | 'state' | 'etag'
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
  /** The list's own query (its filters and position), which the bulk form returns to. */
  listQuery: string;
  csrf: string;
  /** The key has observability:write. */
  writable: boolean;
  /** What the last bulk action did, when the page is its answer. */
  report?: BulkReport | undefined;
}

const errorsHref = (state: string, service?: string, after?: string): string =>
  `/console/errors?${new URLSearchParams({ state, ...(service ? { service } : {}), ...(after ? { after } : {}) })}`;

/** A group's service, a link to its errors; a group without one shows a dash, never an empty link. */
const serviceCell = (service: string, state: string): Html =>
  service ? html`<a href="${errorsHref(state, service)}">${service}</a>` : html`<span class="muted">—</span>`;

function groupRow(g: ErrorsGroup, d: ErrorsData): Html {
  const [state] = d.state;
  return tableRow([
    selectCell(g, d.writable),
    html`<a class="title" href="/console/errors/${g.id}">${g.title}</a><div class="message">${g.culprit}</div>`,
    serviceCell(g.service_name, state),
    occurrenceChart(g.daily, d.now, chartSizes.small),
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
  const rows = table({
    caption: `${label} error groups, most recently seen first`,
    columns: ['Select', 'Error', 'Service', `Last ${chartDays} days`, { label: 'Events', num: true }, 'Last seen'],
    rows: d.groups.map((g) => groupRow(g, d)),
  });
  const scrolled = html`<div class="table-scroll">${rows}</div>`;
  return bulkForm({ listQuery: d.listQuery, csrf: d.csrf, rows: d.groups, writable: d.writable, table: scrolled });
}

export function errorsView(d: ErrorsData): Html {
  const [id] = d.state;
  const chips = errorStates.map(([s, , label]) => ({ label, href: errorsHref(s, d.service), current: s === id }));
  const service = d.service
    ? html`<p class="muted">Service ${d.service} · <a href="${`/console/errors?state=${id}`}">all services</a></p>`
    : '';
  const next = d.nextToken ? errorsHref(id, d.service, d.nextToken) : undefined;
  return html`<h1>Errors</h1>
${bulkReport(d.report)}${filters('State', chips)}
${service}
${groupsTable(d)}
${pager(next, 'Older errors')}`;
}
