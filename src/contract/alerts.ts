// Shapes of the alert rules API (docs/api.md "Alerts"): an environment's rules, what each watches
// for and whom it tells, and its firings. The presenters are domain/alerts/present.ts; what a rule
// means beyond its shape (the search in `q`, where a Slack URL may point) is checked by
// domain/alerts/rules/.
import { z } from 'zod';
import { alertKinds, type AlertWhen } from './alert-kinds.ts';
import { email } from './identity.ts';
import { pageOf, pageQuery } from './pages.ts';
import { resource } from './resource.ts';
import { envParams } from './tenancy.ts';
import { targetUrl } from './webhooks.ts';

export { envParams, pageQuery };

/** The bounds of a rule (docs/api.md "Alerts"), here so the API, the console and the CLI say the same. */
export const alertLimits = {
  rulesPerEnv: 50,
  nameChars: 200,
  actions: 5,
  emailsPerAction: 10,
  thresholdEvents: 1_000_000,
  /** A day: the worker keeps per-minute counts for the longest window only. */
  windowMinutes: 1440,
  /** A week. */
  snoozeMinutes: 10_080,
  defaultSnoozeMinutes: 30,
} as const;

const ruleId = z.string().regex(/^alr_[0-9a-z]{26}$/, 'an alert rule id such as alr_01j…');
export const ruleParams = envParams.extend({ alert_rule: ruleId });

export const alertWhen = z.enum(alertKinds);
export type { AlertWhen };
export const alertRuleState = z.enum(['enabled', 'disabled']);

const name = z.string().trim().min(1).max(alertLimits.nameChars).meta({
  description: "The rule's label, for people (not a resource name: the rule's path is …/alert_rules/{id})",
  example: 'Checkout errors',
});

export const threshold = z
  .strictObject({
    events: z.number().int().min(1).max(alertLimits.thresholdEvents),
    window_minutes: z.number().int().min(1).max(alertLimits.windowMinutes),
  })
  .meta({
    description:
      'frequency rules only, and required for them: `events` or more events of one group within `window_minutes`',
    example: { events: 100, window_minutes: 60 },
  });

const q = z.string().max(8192).meta({
  description: 'Only groups this search (docs/api.md "Search") matches; empty or absent: every group',
  example: 'release:shop@1.4.0 !level:warning',
});

const emailAction = z.strictObject({
  type: z.literal('email'),
  to: z
    .array(email)
    .min(1)
    .max(alertLimits.emailsPerAction)
    .transform((to) => [...new Set(to)]),
});

const slackAction = z.strictObject({
  type: z.literal('slack'),
  url: targetUrl({
    description:
      'A Slack incoming-webhook URL (a secret: answered masked). Where it may point follows the webhook target rules; in a PATCH, the masked URL the API answered keeps that stored URL.',
    example: 'https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX',
  }),
});

const actions = z
  .array(z.discriminatedUnion('type', [emailAction, slackAction]))
  .min(1)
  .max(alertLimits.actions);

const snooze = z.number().int().min(0).max(alertLimits.snoozeMinutes).meta({
  description: 'At most one notification per group and rule within this many minutes; 0: every time it holds',
});

export const createRuleBody = z
  .strictObject({
    name,
    when: alertWhen,
    threshold: threshold.optional(),
    q: q.optional(),
    actions,
    snooze_minutes: snooze.default(alertLimits.defaultSnoozeMinutes),
    state: alertRuleState.default('enabled'),
  })
  .superRefine((rule, ctx) => {
    if (rule.when === 'frequency' && !rule.threshold)
      ctx.addIssue({ code: 'custom', path: ['threshold'], message: 'a frequency rule needs a threshold' });
    if (rule.when !== 'frequency' && rule.threshold)
      ctx.addIssue({ code: 'custom', path: ['threshold'], message: 'only a frequency rule has a threshold' });
  });

export const updateRuleBody = z
  .strictObject({
    name: name.optional(),
    when: alertWhen.optional(),
    threshold: threshold.optional(),
    q: q.optional(),
    actions: actions.optional(),
    snooze_minutes: snooze.optional(),
    state: alertRuleState.optional(),
  })
  .meta({
    description:
      'Only the fields given change; `actions`, when given, replaces the list. Leaving `frequency` drops the threshold.',
  });

export const ruleActionResource = z.discriminatedUnion('type', [
  z.object({ type: z.literal('email'), to: z.array(z.string()) }),
  z.object({
    type: z.literal('slack'),
    url: z.string().meta({
      description: 'Masked: the origin, `/…` and the last 4 characters',
      example: 'https://hooks.slack.com/…XXXX',
    }),
  }),
]);

export const ruleResource = resource('AlertRule', {
  id: z.string(),
  name: z.string(),
  when: alertWhen,
  threshold: z.object({ events: z.number().int(), window_minutes: z.number().int() }).optional(),
  q: z.string().optional(),
  actions: z.array(ruleActionResource),
  snooze_minutes: z.number().int(),
  state: alertRuleState,
  create_time: z.string(),
  update_time: z.string(),
});

export type AlertRule = z.output<typeof ruleResource>;
export type AlertRuleAction = z.output<typeof ruleActionResource>;
/** What creating a rule takes: `threshold` for (and only for) frequency rules. */
export type AlertRuleInput = z.input<typeof createRuleBody>;
/** What updating a rule takes: only the fields given change. */
export type AlertRuleUpdate = z.input<typeof updateRuleBody>;

export const ruleList = pageOf('alert_rules', ruleResource).meta({ id: 'AlertRuleList' });

export const firingActionState = z.enum(['pending', 'sent', 'failed']);

export const firingResource = resource('AlertFiring', {
  time: z.string(),
  group: z.string().meta({
    description: "The group's resource name",
    example: 'orgs/acme/projects/shop/envs/prod/error_groups/eg_01jd…',
  }),
  reason: z.string(),
  actions: z.array(z.object({ type: z.string(), state: firingActionState, error: z.string().optional() })),
});

export type AlertFiring = z.output<typeof firingResource>;

export const firingList = pageOf('firings', firingResource).meta({ id: 'AlertFiringList' });
