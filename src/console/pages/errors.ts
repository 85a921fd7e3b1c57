// /console/errors, the console's landing page: the environment's error groups, newest last seen
// first, filtered by state ("Unresolved" by default) and service, 50 a page, each with its
// occurrences of the last 14 days (chart.ts, from the hourly counts: never a scan of events).
import { z } from 'zod';
import { groupQueries, type GroupState } from '../../domain/errors/groups/queries.ts';
import { defineRoute } from '../../http/route.ts';
import { html } from '../../html/html.ts';
import { seeOther, text } from '../../html/page-route.ts';
import { chartDays, chartSizes, occurrenceChart } from '../chart.ts';
import { timeTag } from '../format.ts';
import { render, sessionWith } from '../context.ts';
import { consolePage } from '../page.ts';

const pageSize = 50;
const states: [string, GroupState | undefined, string][] = [
  ['unresolved', 'unresolved', 'Unresolved'],
  ['acknowledged', 'acknowledged', 'Acknowledged'],
  ['resolved', 'resolved', 'Resolved'],
  ['all', undefined, 'All'],
];

/** The next page's position (last seen time and id of the page's last group), as it travels in links. */
const cursor = (t: Date, id: string) => Buffer.from(`${t.toISOString()}|${id}`).toString('base64url');
function readCursor(v: string | undefined): { t: string; id: string } | undefined {
  const m = v
    ? /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\|([A-Za-z0-9_-]{1,64})$/.exec(Buffer.from(v, 'base64url').toString())
    : null;
  return m ? { t: m[1]!, id: m[2]! } : undefined;
}

export const consoleHome = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console',
  operationId: 'consoleHome',
  summary: "The console's landing page (the errors page)",
  response: { ...consolePage.response, status: 303, type: 'redirect', description: 'To /console/errors' },
  handle: ({ ctx }) => seeOther(ctx, '/console/errors'),
});

export const consoleErrors = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/errors',
  operationId: 'consoleErrors',
  summary: "The environment's error groups",
  query: z.looseObject({ state: text(20), service: text(200), after: text(200) }),
  async handle({ query, deps, ctx }) {
    const session = await sessionWith(ctx, deps, 'observability:read');
    if (!session) return undefined;
    const state = states.find(([id]) => id === query.state) ?? states[0]!;
    const service = query.service || undefined;
    const link = (o: { state?: string; after?: string }) =>
      `/console/errors?${new URLSearchParams({ state: o.state ?? state[0], ...(service ? { service } : {}), ...(o.after ? { after: o.after } : {}) })}`;
    const rows = await groupQueries(deps.db).listGroups(
      session.envId,
      { ...(state[1] ? { state: state[1] } : {}), ...(service ? { service_name: service } : {}) },
      readCursor(query.after),
      pageSize + 1,
    );
    const groups = rows.slice(0, pageSize);
    const now = new Date();
    const daily = await groupQueries(deps.db).dailyCounts(
      session.envId,
      groups.map((g) => g.id),
      now,
      chartDays,
    );
    const last = groups.at(-1);
    const next = rows.length > pageSize && last ? link({ after: cursor(last.last_seen_time, last.id) }) : undefined;
    render(ctx, deps, {
      title: 'Errors',
      session,
      section: 'errors',
      body: html`<h1>Errors</h1>
<ul class="filters" aria-label="State">${states.map(([id, , label]) => html`<li><a href="${link({ state: id })}"${id === state[0] ? html` aria-current="true"` : ''}>${label}</a></li>`)}</ul>
${service ? html`<p class="muted">Service ${service} · <a href="${`/console/errors?state=${state[0]}`}">all services</a></p>` : ''}
${
  groups.length === 0
    ? html`<p class="empty">No ${state[0] === 'all' ? '' : state[2].toLowerCase() + ' '}errors${service ? html` in ${service}` : ''}.</p>`
    : html`<table><caption class="muted">${state[2]} error groups, most recently seen first</caption>
<thead><tr><th scope="col">Error</th><th scope="col">Service</th><th scope="col">Last ${chartDays} days</th><th scope="col" class="num">Events</th><th scope="col">Last seen</th></tr></thead>
<tbody>${groups.map(
        (
          g,
        ) => html`<tr><td><a class="title" href="/console/errors/${g.id}">${g.title}</a><div class="message">${g.culprit}</div></td>
<td><a href="${`/console/errors?${new URLSearchParams({ state: state[0], service: g.service_name })}`}">${g.service_name}</a></td>
<td>${occurrenceChart(daily.get(g.id)!, now, chartSizes.small)}</td>
<td class="num">${Number(g.occurrence_count).toLocaleString('en')}</td>
<td>${timeTag(g.last_seen_time)}</td></tr>`,
      )}</tbody></table>`
}
${next ? html`<nav class="pager" aria-label="Pages"><a href="${next}">Older errors</a></nav>` : ''}`,
    });
    return undefined;
  },
});
