// /console/alerts: the environment's alert rules with their last firing, the form that creates one
// and "Delete" per rule (views/alerts.ts). The rules are the API's own (domain/alerts/rules/), the
// form read by the API's schema (alert-form.ts), so a rule made here is checked as one made there;
// a refusal comes back on this page, saying why.
import type { Context } from 'koa';
import { z } from 'zod';
import { AppError } from '../../app-error.ts';
import { alertLimits } from '../../contract/alerts.ts';
import { ruleView } from '../../domain/alerts/present.ts';
import { lastFirings, listRules } from '../../domain/alerts/rules/queries.ts';
import { createRule, deleteRule } from '../../domain/alerts/rules/rules.ts';
import { form, seeOther, text } from '../../html/page-route.ts';
import type { AppDeps } from '../../http/context.ts';
import { defineRoute, type ConsolePrincipal } from '../../http/route.ts';
import { consolePage, csrfExample } from '../page.ts';
import { renderSection } from '../render.ts';
import { alertsView, emptyAlertForm, type AlertFormValues } from '../views/alerts.ts';
import { formValues, problemOf, readAlertForm } from './alert-form.ts';

const ruleId = /^alr_[0-9a-z]{26}$/;

interface Outcome {
  notice?: string | undefined;
  problems?: string[];
  form?: AlertFormValues;
  status?: number;
}

async function showAlerts(ctx: Context, deps: AppDeps, principal: ConsolePrincipal, o: Outcome = {}) {
  // Every rule fits one page: an environment has at most 50.
  const rules = await listRules(deps.db, principal.envId, undefined, alertLimits.rulesPerEnv);
  const last = await lastFirings(
    deps.db,
    principal.envId,
    rules.map((r) => r.id),
  );
  const page = { title: 'Alerts', section: 'alerts', status: o.status } as const;
  return renderSection(ctx, deps, principal, page, (forms) =>
    alertsView({
      rules: rules.map((r) => {
        const l = last.find((f) => f.rule_id === r.id);
        return { rule: ruleView(r), last: l && { time: l.time, groupId: l.group_id, title: l.title } };
      }),
      ...forms,
      form: o.form ?? emptyAlertForm,
      notice: o.notice,
      problems: o.problems,
    }),
  );
}

export const consoleAlerts = defineRoute({
  ...consolePage,
  method: 'get',
  path: '/console/alerts',
  operationId: 'consoleAlerts',
  summary: "The environment's alert rules, and the form that creates one",
  scope: 'observability:read',
  query: z.looseObject({ created: text(64), deleted: text(64) }),
  async handle({ query, principal, deps, ctx }) {
    const created = query.created && ruleId.test(query.created) ? query.created : undefined;
    const deleted = query.deleted && ruleId.test(query.deleted) ? query.deleted : undefined;
    const notice = created ? `Rule ${created} created.` : deleted ? `Rule ${deleted} deleted.` : undefined;
    return showAlerts(ctx, deps, principal, { notice });
  },
});

const fields = ['name', 'when', 'events', 'window', 'q', 'emails', 'slack', 'snooze'] as const;

export const consoleCreateAlert = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/alerts',
  operationId: 'consoleCreateAlert',
  summary: 'Create an alert rule',
  scope: 'observability:write',
  csrf: true,
  body: form('csrf', ...fields),
  example: {
    csrf: csrfExample,
    name: 'Checkout errors',
    when: 'frequency',
    events: '100',
    window: '10',
    q: 'service:checkout',
    emails: 'oncall@example.com',
    slack: '',
    snooze: '30',
  },
  response: { ...consolePage.response, status: 303, type: 'redirect', description: 'To the alerts page' },
  async handle({ body: f, principal, deps, ctx }) {
    const read = readAlertForm(f);
    const refused = (problems: string[], status: number) =>
      showAlerts(ctx, deps, principal, { problems, status, form: formValues(f) });
    if (read.problems) return refused(read.problems, 400);
    try {
      const rule = await createRule(deps, principal.envId, read.rule);
      return seeOther(ctx, `/console/alerts?created=${rule.id}`);
    } catch (err) {
      if (!(err instanceof AppError) || (err.code !== 'invalid_request' && err.code !== 'conflict')) throw err;
      const named = (err.details?.fields ?? []) as { field: string; message: string }[];
      const emails = read.rule.actions.flatMap((a) => (a.type === 'email' ? a.to : []));
      const problems = named.length
        ? named.map((n) => problemOf(n.field.replace(/^body\./, ''), n.message, emails))
        : [err.message];
      return refused(problems, err.status);
    }
  },
});

export const consoleDeleteAlert = defineRoute({
  ...consolePage,
  method: 'post',
  path: '/console/alerts/{id}/delete',
  operationId: 'consoleDeleteAlert',
  summary: 'Delete an alert rule with its firings',
  scope: 'observability:write',
  csrf: true,
  params: z.object({ id: z.string().max(64) }),
  body: form('csrf'),
  example: { csrf: csrfExample },
  response: { ...consolePage.response, status: 303, type: 'redirect', description: 'To the alerts page' },
  async handle({ params, principal, deps, ctx }) {
    if (!ruleId.test(params.id)) throw new AppError('not_found', 'There is no such alert rule in this environment.');
    await deleteRule(deps.db, principal.envId, params.id);
    return seeOther(ctx, `/console/alerts?deleted=${params.id}`);
  },
});
