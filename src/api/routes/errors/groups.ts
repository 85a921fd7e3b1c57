// Error groups: list, get, and the three triage calls (docs/api.md "Error tracking").
import type { Context } from 'koa';
import * as groupQueries from '../../../domain/errors/groups/queries.ts';
import { triage, type TriageAction } from '../../../domain/errors/groups/state.ts';
import { batchTriage } from '../../../domain/errors/groups/batch.ts';
import { AppError } from '../../../app-error.ts';
import { defineRoute, type RouteDef } from '../../../http/route.ts';
import {
  batchTriageBody,
  batchTriageResponse,
  envParams,
  groupList,
  groupParams,
  groupResource,
  groupsQuery,
  triageBody,
} from '../../../contract/errors.ts';
import { groupPages, groupView } from '../../../domain/errors/groups/present.ts';
import { groupListFilter } from '../../../domain/errors/search/filter.ts';
import { paginate } from '../../../http/paginate.ts';
import { secretKey } from '../route-parts.ts';

const base = '/v1/orgs/{org}/projects/{project}/envs/{env}/error_groups';

export const listGroups = defineRoute({
  method: 'get',
  path: base,
  operationId: 'listErrorGroups',
  summary: 'Error groups matching a search, newest last_seen_time (or first_seen_time, most events, most users) first',
  ...secretKey('Error tracking', 'observability:read'),
  params: envParams,
  query: groupsQuery,
  response: { status: 200, description: 'A page of groups', schema: groupList },
  async handle({ query, principal, deps }) {
    const { filter, sort, bound } = groupListFilter(query);
    const page = await paginate(deps.config, query, groupPages('error_groups', sort, bound), (after, limit) =>
      groupQueries.listGroups(deps.db, principal.envId, filter, after, limit),
    );
    return {
      error_groups: page.items.map((g) => groupView(principal.envName, g)),
      next_page_token: page.next_page_token,
    };
  },
});

export const getGroup = defineRoute({
  method: 'get',
  path: `${base}/{error_group}`,
  operationId: 'getErrorGroup',
  summary: 'One error group',
  ...secretKey('Error tracking', 'observability:read'),
  params: groupParams,
  response: { status: 200, description: 'The group, with its etag', schema: groupResource },
  async handle({ params, principal, deps }) {
    const g = await groupQueries.getGroup(deps.db, principal.envId, params.error_group);
    if (!g) throw new AppError('not_found', `no error group ${params.error_group} in this environment`);
    return groupView(principal.envName, g);
  },
});

/** The etag from the body, else from If-Match (RFC 9110 §13.1.1; quotes and W/ dropped). */
function etagOf(body: { etag?: string } | undefined, ctx: Context): string {
  const header = ctx
    .get('if-match')
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
  const etag = body?.etag ?? (header || undefined);
  if (!etag)
    throw new AppError('invalid_request', 'send the group\'s current etag as {"etag": "…"} or in If-Match', {
      details: { field: 'body.etag' },
    });
  return etag;
}

const triageRoute = (action: TriageAction, summary: string): RouteDef =>
  defineRoute({
    method: 'post',
    path: `${base}/{error_group}:${action}`,
    operationId: `${action}ErrorGroup`,
    summary,
    ...secretKey('Error tracking', 'observability:write'),
    params: groupParams,
    body: triageBody,
    example: { etag: '5f1c9a7e0b3d2c48' },
    response: { status: 200, description: 'The updated group, with its new etag', schema: groupResource },
    async handle({ params, body, principal, deps, ctx }) {
      const g = await triage(
        deps,
        { id: principal.envId, name: principal.envName },
        params.error_group,
        action,
        etagOf(body, ctx),
      );
      return groupView(principal.envName, g);
    },
  });

/** One triage call over up to 100 groups, each changed or refused on its own (domain/errors/groups/batch.ts). */
export const batchUpdateGroups = defineRoute({
  method: 'post',
  path: `${base}:batchUpdate`,
  operationId: 'batchUpdateErrorGroups',
  summary: 'Acknowledge, resolve or reopen up to 100 groups, each only while its etag matches',
  ...secretKey('Error tracking', 'observability:write'),
  params: envParams,
  body: batchTriageBody,
  example: {
    action: 'resolve',
    groups: [
      { name: 'eg_01jd8x2k3m4n5p6q7r8s9t0v1w', etag: '5f1c9a7e0b3d2c48' },
      {
        name: 'orgs/acme/projects/shop/envs/prod/error_groups/eg_01jd8x4q7r2s5t8v1w3x6y9z0a',
        etag: 'a03e6b9d1c7f4e25',
      },
    ],
  },
  response: {
    status: 200,
    description: 'One result per group, in the order sent: the updated group, or why it was left as it is',
    schema: batchTriageResponse,
  },
  async handle({ body, principal, deps }) {
    const env = { id: principal.envId, name: principal.envName };
    const outcomes = await batchTriage(deps, env, body.groups, body.action);
    return { results: outcomes.map((o) => ('group' in o ? groupView(env.name, o.group) : o)) };
  },
});

export const groupRoutes = [
  batchUpdateGroups,
  listGroups,
  getGroup,
  triageRoute('acknowledge', 'Mark a group as seen and being worked on'),
  triageRoute('resolve', 'Resolve a group; a later occurrence reopens it'),
  triageRoute('reopen', 'Send a resolved or acknowledged group back to triage'),
];
