// /console/errors/{id}: one error group: its title and culprit, state and counts, the occurrences of
// the last 14 days, and the latest event (frames, causes, tags, breadcrumbs, release). "Acknowledge",
// "Resolve" and "Reopen" post the etag the page was rendered with; a stale one changes nothing and
// the page comes back with the group as it is now and "Conflict" in an alert (409), as the API's
// ETAG_MISMATCH (groups/state.ts).
import type { Context } from 'koa';
import { z } from 'zod';
import type { ConsoleSession } from '../../domain/console/sessions.ts';
import { groupQueries, type EventRow, type GroupRow } from '../../domain/errors/groups/queries.ts';
import { transitions, triage, type TriageAction } from '../../domain/errors/groups/state.ts';
import { AppError } from '../../app-error.ts';
import type { AppDeps } from '../../http/context.ts';
import { csrfToken } from '../../http/csrf.ts';
import { defineRoute } from '../../http/route.ts';
import { html, type Html } from '../../html/html.ts';
import { form, seeOther } from '../../html/page-route.ts';
import { chartDays, chartSizes, occurrenceChart } from '../chart.ts';
import { plural, timeTag } from '../format.ts';
import { can, postWith, render, sessionWith } from '../context.ts';
import { consolePage } from '../page.ts';
import { stackFrames } from '../views/frames.ts';

const groupId = /^eg_[0-9a-z]{26}$/;
const actions: [TriageAction, string][] = [
  ['acknowledge', 'Acknowledge'],
  ['resolve', 'Resolve'],
  ['reopen', 'Reopen'],
];

async function readGroup(deps: AppDeps, session: ConsoleSession, id: string): Promise<GroupRow> {
  const group = groupId.test(id) ? await groupQueries(deps.db).getGroup(session.envId, id) : undefined;
  if (!group) throw new AppError('not_found', 'There is no such error group in this environment.');
  return group;
}

function triageForm(ctx: Context, deps: AppDeps, session: ConsoleSession, g: GroupRow): Html {
  const writable = can(session, 'observability:write');
  return html`<form method="post" action="/console/errors/${g.id}/triage" class="actions">
<input type="hidden" name="csrf" value="${csrfToken(ctx, deps.config)}"><input type="hidden" name="etag" value="${g.etag}">
${actions.map(
  ([action, label]) =>
    html`<button type="submit" name="action" value="${action}"${writable && transitions[action].from.includes(g.state) ? '' : html` disabled`}>${label}</button>`,
)}
${writable ? '' : html`<span class="muted">Read-only: the key this console was opened with lacks observability:write.</span>`}
</form>`;
}

function latestEvent(e: EventRow | undefined): Html {
  if (!e) return html`<p class="muted">The events of this group have been pruned.</p>`;
  const b = e.body;
  const tags = Object.entries(b.tags);
  return html`<h2>Latest event</h2>
<p class="muted">${b.exception_type}${b.message ? `: ${b.message}` : ''} · ${timeTag(e.event_time)}${b.release ? html` · release <code>${b.release}</code>` : ''}</p>
${stackFrames(b.stack_frames)}
${(b.linked_exceptions ?? []).map(
  (l) =>
    html`<h3>Caused by (${l.source}): ${l.exception_type}${l.message ? `: ${l.message}` : ''}</h3>${stackFrames(l.stack_frames)}`,
)}
<h2>Tags</h2>
${tags.length === 0 ? html`<p class="muted">No tags.</p>` : html`<table><thead><tr><th scope="col">Tag</th><th scope="col">Value</th></tr></thead><tbody>${tags.map(([k, v]) => html`<tr><td><code>${k}</code></td><td>${v}</td></tr>`)}</tbody></table>`}
<h2>Breadcrumbs</h2>
${
  b.breadcrumbs.length === 0
    ? html`<p class="muted">No breadcrumbs.</p>`
    : html`<table><thead><tr><th scope="col">Time</th><th scope="col">Category</th><th scope="col">Message</th></tr></thead><tbody>${b.breadcrumbs.map(
        (c) =>
          html`<tr><td>${c.timestamp ?? ''}</td><td>${c.category ?? c.type ?? ''}</td><td class="message">${c.message ?? ''}</td></tr>`,
      )}</tbody></table>`
}`;
}

async function showGroup(
  ctx: Context,
  deps: AppDeps,
  session: ConsoleSession,
  g: GroupRow,
  conflict = false,
): Promise<undefined> {
  const now = new Date();
  const q = groupQueries(deps.db);
  const [[latest], daily] = await Promise.all([
    q.listEvents(session.envId, g.id, undefined, 1),
    q.dailyCounts(session.envId, [g.id], now, chartDays),
  ]);
  render(ctx, deps, {
    title: g.title,
    session,
    section: 'errors',
    status: conflict ? 409 : 200,
    body: html`<p><a href="/console/errors">← Errors</a></p>
${conflict ? html`<div class="alert error" role="alert"><strong>Conflict:</strong> this error changed since the page was loaded, or that action does not apply to it now (it is ${g.state}). Nothing was changed; review it below and try again.</div>` : ''}
<h1 class="title">${g.title}</h1>
<p class="message">${g.culprit}</p>
<p><span class="state ${g.state}">${g.state}</span> · ${plural(Number(g.occurrence_count), 'event')} · first seen ${timeTag(g.first_seen_time)} · last seen ${timeTag(g.last_seen_time)}${g.service_name ? html` · service ${g.service_name}` : ''}${g.last_release ? html` · release <code>${g.last_release}</code>` : ''}</p>
${triageForm(ctx, deps, session, g)}
<h2>Last ${chartDays} days</h2>
${occurrenceChart(daily.get(g.id)!, now, chartSizes.large)}
${latestEvent(latest)}`,
  });
  return undefined;
}

export const consoleGroup = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/errors/{id}',
  operationId: 'consoleGroup',
  summary: 'One error group: its latest event, chart and triage',
  params: z.object({ id: z.string().max(64) }),
  async handle({ params, deps, ctx }) {
    const session = await sessionWith(ctx, deps, 'observability:read');
    if (!session) return undefined;
    return showGroup(ctx, deps, session, await readGroup(deps, session, params.id));
  },
});

export const consoleTriage = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/errors/{id}/triage',
  operationId: 'consoleTriage',
  summary: 'Acknowledge, resolve or reopen a group, with the etag its page was rendered with',
  params: z.object({ id: z.string().max(64) }),
  body: form('csrf', 'etag', 'action'),
  response: { ...consolePage.response, status: 303, type: 'redirect', description: "To the group's page" },
  async handle({ params, body: f, deps, ctx }) {
    const session = await postWith(ctx, deps, f.csrf, 'observability:write');
    if (!session) return undefined;
    const action = actions.find(([a]) => a === f.action)?.[0];
    if (!action) throw new AppError('invalid_request', 'Choose Acknowledge, Resolve or Reopen.');
    // The triage reads the group itself (an unknown one is not_found); only a conflict reads it again.
    try {
      await triage(deps, { id: session.envId, name: session.envName }, params.id, action, f.etag ?? '');
    } catch (err) {
      if (!(err instanceof AppError) || (err.code !== 'ETAG_MISMATCH' && err.code !== 'INVALID_STATE')) throw err;
      return showGroup(ctx, deps, session, await readGroup(deps, session, params.id), true);
    }
    return seeOther(ctx, `/console/errors/${params.id}`);
  },
});
