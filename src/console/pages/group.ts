// /console/errors/{id}: one error group (views/group.ts): its chart, tag summary, latest event and
// its events 20 a page (`?after=` the signed position of the last one shown, as the console's
// lists page). "Acknowledge", "Resolve" and "Reopen" post the etag the page was rendered with; a
// stale one changes nothing and the page comes back with the group as it is now and "Conflict" in
// an alert (409), as the API's ETAG_MISMATCH (groups/state.ts).
import type { Context } from 'koa';
import { z } from 'zod';
import { byTimeAndId } from '../../contract/pages.ts';
import { dailyCounts, getGroup, listEvents, type EventRow, type GroupRow } from '../../domain/errors/groups/queries.ts';
import { tagSummary } from '../../domain/errors/groups/tag-queries.ts';
import { triage } from '../../domain/errors/groups/state.ts';
import { AppError } from '../../app-error.ts';
import { form, seeOther, text } from '../../html/page-route.ts';
import type { AppDeps } from '../../http/context.ts';
import { defineRoute, type ConsolePrincipal } from '../../http/route.ts';
import { consoleItemPage, consolePage, csrfExample } from '../page.ts';
import { pageFrom } from '../paging.ts';
import { renderSection } from '../render.ts';
import { chartDays } from '../views/chart.ts';
import { groupView, triageActions } from '../views/group.ts';

const groupId = /^eg_[0-9a-z]{26}$/;

/** A group's events page by (event_time, uid), as the API's, under the console's own purpose. */
const eventPages = byTimeAndId<EventRow>('console_error_events', (e) => ({ t: e.event_time.toISOString(), id: e.uid }));
const eventsPerPage = 20;
/** The tag summary's bounds: Sentry's shows a key's top values; clients may send many keys. */
const tagLimits = { maxKeys: 30, perKey: 5 };

export async function readGroup(deps: AppDeps, principal: ConsolePrincipal, id: string): Promise<GroupRow> {
  const group = groupId.test(id) ? await getGroup(deps.db, principal.envId, id) : undefined;
  if (!group) throw new AppError('not_found', 'There is no such error group in this environment.');
  return group;
}

/**
 * Loads the group's chart, tags, latest event and a page of its events (from `after`), and answers
 * its page (409 after a conflicting triage).
 */
async function showGroup(
  ctx: Context,
  deps: AppDeps,
  principal: ConsolePrincipal,
  g: GroupRow,
  o: { conflict?: boolean; after?: string | undefined } = {},
) {
  const now = new Date();
  const env = principal.envId;
  const [page, daily, tags] = await Promise.all([
    pageFrom(deps, o.after, eventPages, (after, limit) => listEvents(deps.db, env, g.id, after, limit), eventsPerPage),
    dailyCounts(deps.db, env, [g.id], now, chartDays),
    tagSummary(deps.db, env, g.id, tagLimits),
  ]);
  // The first page starts with the latest event; a later one does not.
  const [latest] = o.after ? await listEvents(deps.db, env, g.id, undefined, 1) : page.items;
  const conflict = o.conflict ?? false;
  const status = conflict ? 409 : 200;
  return renderSection(ctx, deps, principal, { title: g.title, section: 'errors', status }, (forms) =>
    groupView({
      group: g,
      daily: daily.get(g.id)!,
      now,
      latest,
      tags,
      events: page.items,
      nextToken: page.next_page_token,
      firstPage: !o.after,
      ...forms,
      conflict,
    }),
  );
}

export const consoleGroup = defineRoute({
  ...consoleItemPage('/console/errors/{id}', 'consoleGroup', 'observability:read'),
  summary: 'One error group: its chart, tags, latest event, events and triage',
  query: z.looseObject({ after: text(512) }),
  async handle({ params, query, principal, deps, ctx }) {
    const group = await readGroup(deps, principal, params.id);
    return showGroup(ctx, deps, principal, group, { after: query.after || undefined });
  },
});

export const consoleTriage = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/errors/{id}/triage',
  operationId: 'consoleTriage',
  summary: 'Acknowledge, resolve or reopen a group, with the etag its page was rendered with',
  scope: 'observability:write',
  csrf: true,
  params: z.object({ id: z.string().max(64) }),
  body: form('csrf', 'etag', 'action'),
  example: { csrf: csrfExample, etag: '3f9a1c0b7d2e4a58', action: 'resolve' },
  response: { ...consolePage.response, status: 303, type: 'redirect', description: "To the group's page" },
  async handle({ params, body: f, principal, deps, ctx }) {
    const action = triageActions.find(([a]) => a === f.action)?.[0];
    if (!action) throw new AppError('invalid_request', 'Choose Acknowledge, Resolve or Reopen.');
    // The triage reads the group itself (an unknown one is not_found); only a conflict reads it again.
    try {
      await triage(deps, { id: principal.envId, name: principal.envName }, params.id, action, f.etag ?? '');
    } catch (err) {
      if (!(err instanceof AppError) || (err.code !== 'ETAG_MISMATCH' && err.code !== 'INVALID_STATE')) throw err;
      return showGroup(ctx, deps, principal, await readGroup(deps, principal, params.id), { conflict: true });
    }
    return seeOther(ctx, `/console/errors/${params.id}`);
  },
});
