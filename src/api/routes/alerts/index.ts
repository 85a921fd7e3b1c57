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
  description:
    'A rule tells a person when an error group needs them: `new_group` (its first event), `regression` (a resolved group has an event again) or `frequency` (`threshold.events` events within `threshold.window_minutes`), only for groups its search `q` matches, by email and/or a Slack-compatible incoming webhook, at most once per group within `snooze_minutes` (default 30). A 51st rule answers 409; a refused field is 400 naming it; Slack URLs follow the webhook target rule and are stored sealed.',
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
  description:
    "One page of the environment's rules (`page_size`, `page_token`), each with its Slack URLs masked (origin, `/…` and the last 4 characters).",
  response: { description: 'A page of rules', schema: ruleList },
  keyset: rulePages,
  present: ruleView,
  fetch: ({ deps, principal }, after, limit) => ruleQueries.listRules(deps.db, principal.envId, after, limit),
});

export const getRuleRoute = rules.get({
  operationId: 'getAlertRule',
  summary: 'An alert rule (its Slack URLs masked)',
  description:
    'The rule as created or last changed. A rule of another environment, or none, answers 404; the Slack URL is never shown again after it is set.',
  response: theRule,
  run: async ({ deps, principal }, id) => ruleView(await requireRule(deps.db, principal.envId, id)),
});

export const updateRuleRoute = rules.update({
  operationId: 'updateAlertRule',
  summary: 'Change a rule; only the fields given change, and `actions` replaces the list',
  description:
    'A Slack action sent back with the masked URL the API answered keeps the stored URL, so a client can edit a rule without holding the secret; a masked URL matching none of the rule\'s is 400. Moving a rule to `frequency` needs a threshold; `"state": "disabled"` stops it, and nothing it would have sent is sent later.',
  body: updateRuleBody,
  example: { actions: [{ type: 'email', to: ['oncall@example.com', 'lead@example.com'] }], snooze_minutes: 60 },
  response: theRule,
  run: async ({ deps, principal }, id, body) => ruleView(await updateRule(deps, principal.envId, id, body)),
});

export const deleteRuleRoute = rules.delete({
  operationId: 'deleteAlertRule',
  summary: 'Delete a rule with its firings; it notifies no more',
  description: 'Answers 204 with no body; its firings go with it. A rule of another environment answers 404.',
  run: ({ deps, principal }, id) => deleteRule(deps.db, principal.envId, id),
});

export const listFiringsRoute = defineRoute({
  ...rules.onItemList('firings', 'listAlertFirings', { description: 'A page of firings', schema: firingList }),
  summary: "A rule's firings of the last 30 days with each action's outcome, newest first",
  description:
    "Each firing names the group (its resource name), why the rule fired, and each action's state: `pending`, `sent` or `failed` with the error. Sends are retried for about an hour before an action is `failed`.",
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
