// /console/errors, the console's landing page: the environment's error groups, newest last seen
// first (or as the "Sort" control says), filtered by state ("Unresolved" by default), service and
// the search (the API's language: a refused search is the page with the reason, answered 400),
// 50 a page, each with its occurrences of the last 14 days (from the hourly counts: never a scan
// of events), and the answer of a bulk action (pages/errors-bulk.ts) when its redirect's query
// carries one.
import type { Context } from 'koa';
import { z } from 'zod';
import { AppError } from '../../app-error.ts';
import { groupTitles } from '../../domain/errors/groups/batch-queries.ts';
import { dailyCounts, listGroups } from '../../domain/errors/groups/queries.ts';
import { groupPages } from '../../domain/errors/groups/present.ts';
import { groupListFilter } from '../../domain/errors/search/filter.ts';
import { seeOther, text } from '../../html/page-route.ts';
import type { AppDeps } from '../../http/context.ts';
import { defineRoute, type ConsolePrincipal } from '../../http/route.ts';
import { consolePage, consolePublicPage } from '../page.ts';
import { pageFrom } from '../paging.ts';
import { renderSection } from '../render.ts';
import { chartDays } from '../views/chart.ts';
import { outcomeKeys, readOutcome, type BulkReport } from '../views/bulk.ts';
import { errorSorts, errorStates, errorsView, type ErrorsData } from '../views/errors.ts';

type ErrorsQuery = {
  state?: string | undefined;
  service?: string | undefined;
  q?: string | undefined;
  sort?: string | undefined;
  after?: string | undefined;
};

/** The search's refusal as the page says it (the API's message names its parameter, `q: …`). */
function searchRefusal(err: unknown): string {
  if (!(err instanceof AppError) || err.code !== 'invalid_request') throw err;
  return `The search is not valid: ${err.message.replace(/^q: /, '')}`;
}

/** The list's own query: what the page was asked for, less the answer of a bulk action. */
function listQuery(ctx: Context): string {
  const q = new URLSearchParams(ctx.querystring);
  for (const key of outcomeKeys) q.delete(key);
  return q.toString();
}

/** The last bulk action's answer, with the groups it names as they are now. */
async function loadReport(deps: AppDeps, principal: ConsolePrincipal, ctx: Context): Promise<BulkReport | undefined> {
  const outcome = readOutcome(new URLSearchParams(ctx.querystring));
  if (!outcome) return undefined;
  const [stale, refused] = await Promise.all([
    groupTitles(deps.db, principal.envId, outcome.stale),
    groupTitles(deps.db, principal.envId, outcome.refused),
  ]);
  return { ...outcome, stale, refused };
}

async function loadErrors(
  deps: AppDeps,
  principal: ConsolePrincipal,
  query: ErrorsQuery,
): Promise<Omit<ErrorsData, 'listQuery' | 'csrf' | 'writable'>> {
  const state = errorStates.find(([id]) => id === query.state) ?? errorStates[0]!;
  const sort = errorSorts.find(([id]) => id === query.sort) ?? errorSorts[0]!;
  const service = query.service || undefined;
  const q = query.q ?? '';
  const now = new Date();
  const shown = { state, sort, service, q, now };
  let list: ReturnType<typeof groupListFilter>;
  try {
    list = groupListFilter({ q, sort: sort[0], state: state[1], service_name: service });
  } catch (err) {
    return { ...shown, searchError: searchRefusal(err), groups: [], nextToken: undefined };
  }
  // Paged as the API's list, under the console's own purpose.
  const pages = groupPages('console_error_groups', list.sort, list.bound);
  const page = await pageFrom(deps, query.after, pages, (after, limit) =>
    listGroups(deps.db, principal.envId, list.filter, after, limit),
  );
  const ids = page.items.map((g) => g.id);
  const daily = await dailyCounts(deps.db, principal.envId, ids, now, chartDays);
  const groups = page.items.map((g) => ({ ...g, daily: daily.get(g.id)! }));
  return { ...shown, groups, nextToken: page.next_page_token };
}

export const consoleHome = defineRoute({
  ...consolePublicPage,
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
  scope: 'observability:read',
  // q is cut far past the search's own bound (1 KiB), so a longer one is refused, never cut to fit.
  query: z.looseObject({ state: text(20), service: text(200), q: text(8192), sort: text(20), after: text(512) }),
  async handle({ query, principal, deps, ctx }) {
    const [list, report] = await Promise.all([loadErrors(deps, principal, query), loadReport(deps, principal, ctx)]);
    const page = { title: 'Errors', section: 'errors', status: list.searchError === undefined ? 200 : 400 } as const;
    return renderSection(ctx, deps, principal, page, (forms) =>
      errorsView({ ...list, report, listQuery: listQuery(ctx), ...forms }),
    );
  },
});
