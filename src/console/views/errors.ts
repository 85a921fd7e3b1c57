// The errors page: the environment's error groups, most recently seen first (or first seen, most
// events, most users), filtered by state, service and a search (docs/api.md "Search"), each with
// its events of the last 14 days as a small chart, and a checkbox to triage the checked rows at
// once (views/bulk.ts). The table scrolls inside its own box, so a phone-wide page never scrolls
// sideways.
import type { ErrorGroupSort } from '../../contract/errors.ts';
import type { GroupRow, GroupState } from '../../domain/errors/groups/queries.ts';
import { html, type Html } from '../../html/html.ts';
import { timeTag } from '../format.ts';
import { chartDays, chartSizes, occurrenceChart } from './chart.ts';
import { bulkForm, bulkReport, selectCell, type BulkReport } from './bulk.ts';
import { alert, empty, filters, pager, table, tableRow } from './components.ts';

/** The state filters: the query's `state`, the groups it lists, and its label. */
export const errorStates: readonly [string, GroupState | undefined, string][] = [
  ['unresolved', 'unresolved', 'Unresolved'],
  ['acknowledged', 'acknowledged', 'Acknowledged'],
  ['resolved', 'resolved', 'Resolved'],
  ['all', undefined, 'All'],
];

/** The orders: the query's `sort`, its label, and how the table's caption says it. */
export const errorSorts: readonly [ErrorGroupSort, string, string][] = [
  ['last_seen', 'Last seen', 'most recently seen first'],
  ['first_seen', 'First seen', 'newest first'],
  ['events', 'Events', 'most events first'],
  ['users', 'Users', 'most users first'],
];

export type ErrorsGroup = Pick<
  GroupRow,
  | 'id'
  | 'title'
  | 'culprit'
  | 'service_name'
  | 'occurrence_count'
  | 'user_count'
  | 'first_seen_time'
  | 'last_seen_time'
  | 'state'
  | 'etag'
> & { daily: readonly number[] };

export interface ErrorsData {
  /** One of errorStates. */
  state: (typeof errorStates)[number];
  service: string | undefined;
  /** The search as typed ('' for none). */
  q: string;
  /** One of errorSorts. */
  sort: (typeof errorSorts)[number];
  /** Why the search was refused (then no groups are listed). */
  searchError?: string | undefined;
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

/** Where the page's links go: the list as it is, with some of its parts changed. */
interface ListAt {
  state: string;
  service?: string | undefined;
  q?: string | undefined;
  sort?: string | undefined;
  after?: string | undefined;
}

const errorsHref = (l: ListAt): string =>
  `/console/errors?${new URLSearchParams({
    state: l.state,
    ...(l.service ? { service: l.service } : {}),
    ...(l.q ? { q: l.q } : {}),
    ...(l.sort && l.sort !== 'last_seen' ? { sort: l.sort } : {}),
    ...(l.after ? { after: l.after } : {}),
  })}`;

const listAt = (d: ErrorsData): ListAt => ({ state: d.state[0], service: d.service, q: d.q, sort: d.sort[0] });

/** A group's service, a link to its errors; a group without one shows a dash, never an empty link. */
const serviceCell = (service: string, at: ListAt): Html =>
  service ? html`<a href="${errorsHref({ ...at, service })}">${service}</a>` : html`<span class="muted">—</span>`;

const count = (n: string | number) => ({ value: Number(n).toLocaleString('en'), className: 'num' });

function groupRow(g: ErrorsGroup, d: ErrorsData): Html {
  return tableRow([
    selectCell(g, d.writable),
    html`<a class="title" href="/console/errors/${g.id}">${g.title}</a><div class="message">${g.culprit}</div>`,
    serviceCell(g.service_name, listAt(d)),
    occurrenceChart(g.daily, d.now, chartSizes.small),
    count(g.occurrence_count),
    count(g.user_count),
    timeTag(g.first_seen_time),
    timeTag(g.last_seen_time),
  ]);
}

function groupsTable(d: ErrorsData): Html | '' {
  const [id, , label] = d.state;
  if (d.searchError !== undefined) return '';
  if (d.groups.length === 0) {
    if (d.q) return empty('No errors match the search.');
    const which = id === 'all' ? '' : label.toLowerCase() + ' ';
    return empty(html`No ${which}errors${d.service ? html` in ${d.service}` : ''}.`);
  }
  const rows = table({
    caption: `${label} error groups, ${d.sort[2]}`,
    columns: [
      'Select',
      'Error',
      'Service',
      `Last ${chartDays} days`,
      { label: 'Events', num: true },
      { label: 'Users', num: true },
      'First seen',
      'Last seen',
    ],
    rows: d.groups.map((g) => groupRow(g, d)),
  });
  const scrolled = html`<div class="table-scroll">${rows}</div>`;
  return bulkForm({ listQuery: d.listQuery, csrf: d.csrf, rows: d.groups, writable: d.writable, table: scrolled });
}

/** The search field and the order, sent by GET with the list's state and service. */
function searchForm(d: ErrorsData): Html {
  const options = errorSorts.map(
    ([value, label]) => html`<option value="${value}"${value === d.sort[0] ? html` selected` : ''}>${label}</option>`,
  );
  return html`<form method="get" action="/console/errors" class="search" role="search">
<input type="hidden" name="state" value="${d.state[0]}">${d.service ? html`<input type="hidden" name="service" value="${d.service}">` : ''}
<label for="q">Search</label><input id="q" name="q" type="search" value="${d.q}" autocomplete="off" spellcheck="false"
 placeholder="is:unresolved release:1.2.0 browser:Chrome TypeError">
<label for="sort">Sort</label><select id="sort" name="sort">${options}</select>
<button type="submit">Apply</button>
</form>
${d.searchError === undefined ? '' : alert('error', d.searchError)}`;
}

export function errorsView(d: ErrorsData): Html {
  const at = listAt(d);
  const chips = errorStates.map(([s, , label]) => ({
    label,
    href: errorsHref({ ...at, state: s }),
    current: s === at.state,
  }));
  const service = d.service
    ? html`<p class="muted">Service ${d.service} · <a href="${errorsHref({ ...at, service: undefined })}">all services</a></p>`
    : '';
  const next = d.nextToken ? errorsHref({ ...at, after: d.nextToken }) : undefined;
  return html`<h1>Errors</h1>
${bulkReport(d.report)}${searchForm(d)}
${filters('State', chips)}
${service}
${groupsTable(d)}
${pager(next, d.sort[0] === 'last_seen' ? 'Older errors' : 'More errors')}`;
}
