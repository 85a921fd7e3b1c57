// POST /console/errors/bulk: "Resolve selected", "Acknowledge selected" or "Reopen selected" on the
// errors page (views/bulk.ts). The checked rows are triaged as one `:batchUpdate` is
// (domain/errors/groups/batch.ts), each only with the etag its row was rendered with, so a group
// that changed since the page was loaded is left as it is. The answer is a 303 back to the same
// list (its filters and position kept), carrying what happened in the query for the page to show.
import { z } from 'zod';
import { batchTriage } from '../../domain/errors/groups/batch.ts';
import { batchTriageMax } from '../../contract/errors.ts';
import { AppError } from '../../app-error.ts';
import { seeOther, text } from '../../html/page-route.ts';
import { defineRoute } from '../../http/route.ts';
import { consolePage, csrfExample } from '../page.ts';
import { bulkActions, outcomeKeys, outcomeQuery, type BulkOutcome } from '../views/bulk.ts';

const groupId = /^eg_[0-9a-z]{26}$/;

/**
 * The checked rows' ids, each once: a form sends one `group` field per checked box, which the
 * body parser (qs) gives as a string, an array, or past 20 an object of indexes.
 */
function checkedIds(field: unknown): string[] {
  const values = typeof field === 'string' ? [field] : field && typeof field === 'object' ? Object.values(field) : [];
  const ids = values.filter((v): v is string => typeof v === 'string' && groupId.test(v));
  return [...new Set(ids)].slice(0, batchTriageMax);
}

export const consoleBulkTriage = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/errors/bulk',
  operationId: 'consoleBulkTriage',
  summary: 'Acknowledge, resolve or reopen the checked groups, each with the etag the page showed',
  scope: 'observability:write',
  csrf: true,
  body: z.looseObject({ csrf: text(), action: text(20), group: z.unknown().optional() }),
  example: {
    csrf: csrfExample,
    action: 'resolve',
    group: ['eg_01jd8x2k3m4n5p6q7r8s9t0v1w', 'eg_01jd8x2k3m4n5p6q7r8s9t0v1x'],
    etag_eg_01jd8x2k3m4n5p6q7r8s9t0v1w: '3f9a1c0b7d2e4a58',
    etag_eg_01jd8x2k3m4n5p6q7r8s9t0v1x: 'a1b2c3d4e5f60718',
  },
  response: { ...consolePage.response, status: 303, type: 'redirect', description: 'To the same list' },
  async handle({ body: f, principal, deps, ctx }) {
    const action = bulkActions.find(([a]) => a === f.action)?.[0];
    if (!action) throw new AppError('invalid_request', 'Choose Resolve, Acknowledge or Reopen selected.');
    const items = checkedIds(f.group).map((id) => {
      const etag = f[`etag_${id}`];
      return { name: id, etag: typeof etag === 'string' ? etag : '' };
    });
    const outcome: BulkOutcome = { action, changed: 0, stale: [], refused: [], gone: 0 };
    const results = items.length
      ? await batchTriage(deps, { id: principal.envId, name: principal.envName }, items, action)
      : [];
    results.forEach((r, i) => {
      if ('group' in r) outcome.changed++;
      else if (r.error.code === 'ETAG_MISMATCH') outcome.stale.push(items[i]!.name);
      else if (r.error.code === 'INVALID_STATE') outcome.refused.push(items[i]!.name);
      else outcome.gone++;
    });
    // Back to the list the form was on: its own query (state, service, search, position), then the outcome.
    const back = new URLSearchParams(ctx.querystring);
    for (const key of outcomeKeys) back.delete(key);
    for (const [k, v] of outcomeQuery(outcome)) back.append(k, v);
    return seeOther(ctx, `/console/errors?${back}`);
  },
});
