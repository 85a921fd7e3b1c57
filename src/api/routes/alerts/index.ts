// Alert rules and their firings (docs/api.md "Alerts"), for the application's server with a secret
// key holding observability:read or observability:write. Every query is scoped by the key's
// environment; a firing is found only through a rule of that environment.
import {
  createRuleBody,
  firingList,
  ruleList,
  ruleParams,
  ruleResource,
  updateRuleBody,
} from '../../../contract/alerts.ts';
import { firingPages, firingView, rulePages, ruleView } from '../../../domain/alerts/present.ts';
import { createRule, deleteRule, requireRule, updateRule } from '../../../domain/alerts/rules/rules.ts';
import * as ruleQueries from '../../../domain/alerts/rules/queries.ts';
import { defineRoute } from '../../../http/route.ts';
import { envResource } from '../resource.ts';
import { listPageWith } from '../route-parts.ts';

const rules = envResource('Alerts', 'observability', 'alert_rules/{alert_rule}', ruleParams);
const theRule = { description: 'The rule', schema: ruleResource };

export const createRuleRoute = rules.create({
  operationId: 'createAlertRule',
  summary: 'Add an alert rule (at most 50 per environment)',
  body: createRuleBody,
  example: {
    name: 'Checkout errors',
    when: 'new_group',
    q: 'service:checkout !level:warning',
    actions: [
      { type: 'email', to: ['oncall@example.com'] },
      { type: 'slack', url: 'https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX' },
    ],
    snooze_minutes: 30,
  },
  response: theRule,
  run: async ({ deps, principal }, body) => ruleView(await createRule(deps, principal.envId, body)),
});

export const listRulesRoute = rules.list({
  operationId: 'listAlertRules',
  summary: "The environment's alert rules, oldest first",
  response: { description: 'A page of rules', schema: ruleList },
  keyset: rulePages,
  present: ruleView,
  fetch: ({ deps, principal }, after, limit) => ruleQueries.listRules(deps.db, principal.envId, after, limit),
});

export const getRuleRoute = rules.get({
  operationId: 'getAlertRule',
  summary: 'An alert rule (its Slack URLs masked)',
  response: theRule,
  run: async ({ deps, principal }, id) => ruleView(await requireRule(deps.db, principal.envId, id)),
});

export const updateRuleRoute = rules.update({
  operationId: 'updateAlertRule',
  summary: 'Change a rule; only the fields given change, and `actions` replaces the list',
  body: updateRuleBody,
  example: { actions: [{ type: 'email', to: ['oncall@example.com', 'lead@example.com'] }], snooze_minutes: 60 },
  response: theRule,
  run: async ({ deps, principal }, id, body) => ruleView(await updateRule(deps, principal.envId, id, body)),
});

export const deleteRuleRoute = rules.delete({
  operationId: 'deleteAlertRule',
  summary: 'Delete a rule with its firings; it notifies no more',
  run: ({ deps, principal }, id) => deleteRule(deps.db, principal.envId, id),
});

export const listFiringsRoute = defineRoute({
  ...rules.onItemList('firings', 'listAlertFirings', { description: 'A page of firings', schema: firingList }),
  summary: "A rule's firings of the last 30 days with each action's outcome, newest first",
  async handle({ params, query, principal, deps }) {
    const rule = await requireRule(deps.db, principal.envId, params.alert_rule);
    const present = (f: ruleQueries.FiringRow, actions: ruleQueries.FiringActionRow[]) =>
      firingView(principal.envName, f, actions);
    const firings = { collection: 'firings', keyset: firingPages, present } as const;
    return listPageWith(
      deps,
      query,
      firings,
      (before, limit) => ruleQueries.listFirings(deps.db, principal.envId, rule.id, before, limit),
      {
        fetch: (rows) =>
          ruleQueries.listFiringActions(
            deps.db,
            rows.map((f) => f.id),
          ),
        of: (action, firing) => action.firing_id === firing.id,
      },
    );
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
