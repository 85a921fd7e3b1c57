// Alert rules and their firings (docs/api.md "Alerts"), for the application's server with a secret
// key holding observability:read or observability:write. Every query is scoped by the key's
// environment; a firing is found only through a rule of that environment.
import { z } from 'zod';
import {
  createRuleBody,
  envParams,
  firingList,
  pageQuery,
  ruleList,
  ruleParams,
  ruleResource,
  updateRuleBody,
} from '../../../contract/alerts.ts';
import { firingPages, firingView, rulePages, ruleView } from '../../../domain/alerts/present.ts';
import { createRule, deleteRule, requireRule, updateRule } from '../../../domain/alerts/rules/rules.ts';
import * as ruleQueries from '../../../domain/alerts/rules/queries.ts';
import { paginate } from '../../../http/paginate.ts';
import { defineRoute, type Method } from '../../../http/route.ts';
import { listPage, secretKey } from '../route-parts.ts';

const base = '/v1/orgs/{org}/projects/{project}/envs/{env}/alert_rules';
const read = secretKey('Alerts', 'observability:read');
const write = secretKey('Alerts', 'observability:write');

/** A route on one rule: its method, what follows the rule's id, who may call it, its id. */
const onRule = (method: Method, suffix: string, access: typeof read | typeof write, operationId: string) => ({
  method,
  operationId,
  path: `${base}/{alert_rule}${suffix}`,
  ...access,
  params: ruleParams,
});

export const createRuleRoute = defineRoute({
  method: 'post',
  path: base,
  operationId: 'createAlertRule',
  summary: 'Add an alert rule (at most 50 per environment)',
  ...write,
  params: envParams,
  body: createRuleBody,
  response: { status: 201, description: 'The rule', schema: ruleResource },
  async handle({ body, principal, deps }) {
    return ruleView(await createRule(deps, principal.envId, body));
  },
});

export const listRulesRoute = defineRoute({
  method: 'get',
  path: base,
  operationId: 'listAlertRules',
  summary: "The environment's alert rules, oldest first",
  ...read,
  params: envParams,
  query: pageQuery,
  response: { status: 200, description: 'A page of rules', schema: ruleList },
  async handle({ query, principal, deps }) {
    const list = { collection: 'alert_rules', keyset: rulePages, present: ruleView } as const;
    return listPage(deps, query, list, (after, limit) => ruleQueries.listRules(deps.db, principal.envId, after, limit));
  },
});

export const getRuleRoute = defineRoute({
  ...onRule('get', '', read, 'getAlertRule'),
  summary: 'An alert rule (its Slack URLs masked)',
  response: { status: 200, description: 'The rule', schema: ruleResource },
  async handle({ params, principal, deps }) {
    return ruleView(await requireRule(deps.db, principal.envId, params.alert_rule));
  },
});

export const updateRuleRoute = defineRoute({
  ...onRule('patch', '', write, 'updateAlertRule'),
  summary: 'Change a rule; only the fields given change, and `actions` replaces the list',
  body: updateRuleBody,
  response: { status: 200, description: 'The rule', schema: ruleResource },
  async handle({ params, body, principal, deps }) {
    return ruleView(await updateRule(deps, principal.envId, params.alert_rule, body));
  },
});

export const deleteRuleRoute = defineRoute({
  ...onRule('delete', '', write, 'deleteAlertRule'),
  summary: 'Delete a rule with its firings; it notifies no more',
  response: { status: 204, description: 'Deleted', schema: z.undefined(), type: 'empty' },
  async handle({ params, principal, deps }) {
    await deleteRule(deps.db, principal.envId, params.alert_rule);
    return undefined;
  },
});

export const listFiringsRoute = defineRoute({
  ...onRule('get', '/firings', read, 'listAlertFirings'),
  summary: "A rule's firings of the last 30 days with each action's outcome, newest first",
  query: pageQuery,
  response: { status: 200, description: 'A page of firings', schema: firingList },
  async handle({ params, query, principal, deps }) {
    const rule = await requireRule(deps.db, principal.envId, params.alert_rule);
    const page = await paginate(deps.config, query, firingPages, (before, limit) =>
      ruleQueries.listFirings(deps.db, principal.envId, rule.id, before, limit),
    );
    const actions = await ruleQueries.listFiringActions(
      deps.db,
      page.items.map((f) => f.id),
    );
    return {
      firings: page.items.map((f) =>
        firingView(
          principal.envName,
          f,
          actions.filter((a) => a.firing_id === f.id),
        ),
      ),
      next_page_token: page.next_page_token,
    };
  },
});

export const alertRoutes = [
  createRuleRoute,
  listRulesRoute,
  getRuleRoute,
  updateRuleRoute,
  deleteRuleRoute,
  listFiringsRoute,
];
