// `cairn alerts create|list|get|delete|firings` over the HTTP API (docs/api.md "Alerts", secret
// key with observability:read or observability:write). The API checks the rule; the flags here
// only take it apart into the request.
import { alertKinds, type AlertWhen } from '../../contract/alert-kinds.ts';
import { AlertsApi, type AlertFiring, type AlertRule, type AlertRuleInput } from '../../sdk/alerts.ts';
import { CliError, type CliContext, type Register } from '../context.ts';
import { collectionCommands, type EnvFlags } from '../resource-commands.ts';

interface CreateFlags extends EnvFlags {
  name: string;
  when: AlertWhen;
  events?: number;
  window?: number;
  q?: string;
  email?: string[];
  slack?: string[];
  snooze?: number;
  disabled?: boolean;
}

const integer = (flag: string, min: number, max: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new CliError(`${flag} is a whole number from ${min} to ${max}`);
  return n;
};

const when = (v: string): AlertWhen => {
  const kind = alertKinds.find((k) => k === v);
  if (!kind) throw new CliError(`--when is ${alertKinds.join(', ')}`);
  return kind;
};

/** Repeated or comma-separated addresses, into one list. */
const addresses = (v: string, previous: string[] = []): string[] => [
  ...previous,
  ...v
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean),
];
const collect = (v: string, previous: string[] = []): string[] => [...previous, v];

function ruleBody(o: CreateFlags): AlertRuleInput {
  const hasThreshold = o.events !== undefined || o.window !== undefined;
  if (o.when === 'frequency' && (o.events === undefined || o.window === undefined))
    throw new CliError('--when frequency needs --events <n> and --window <minutes>');
  if (o.when !== 'frequency' && hasThreshold) throw new CliError('--events and --window are for --when frequency');
  const actions: AlertRuleInput['actions'] = [
    ...(o.email?.length ? [{ type: 'email' as const, to: o.email }] : []),
    ...(o.slack ?? []).map((url) => ({ type: 'slack' as const, url })),
  ];
  if (actions.length === 0) throw new CliError('say whom to tell: --email <address>… and/or --slack <url>');
  return {
    name: o.name,
    when: o.when,
    ...(o.when === 'frequency' ? { threshold: { events: o.events!, window_minutes: o.window! } } : {}),
    ...(o.q !== undefined ? { q: o.q } : {}),
    actions,
    ...(o.snooze !== undefined ? { snooze_minutes: o.snooze } : {}),
    ...(o.disabled ? { state: 'disabled' as const } : {}),
  };
}

const whenText = (r: AlertRule) =>
  r.threshold ? `frequency ≥${r.threshold.events}/${r.threshold.window_minutes}min` : r.when;

const actionText = (a: AlertRule['actions'][number]) => (a.type === 'email' ? a.to.join(',') : `slack ${a.url}`);

const ruleLine = (r: AlertRule) =>
  `${r.id}  ${r.state.padEnd(8)} ${whenText(r)}  ${r.name}  → ${r.actions.map(actionText).join('; ')}`;

const ruleDetail = (r: AlertRule) =>
  [
    ruleLine(r),
    ...(r.q ? [`  search: ${r.q}`] : []),
    `  snooze: ${r.snooze_minutes} min`,
    `  created ${r.create_time}, updated ${r.update_time}`,
  ].join('\n');

const firingLine = (f: AlertFiring) =>
  `${f.time}  ${f.reason}  ${f.group}  ${f.actions.map((a) => `${a.type}:${a.state}${a.error ? ` (${a.error})` : ''}`).join(' ')}`;

export const register: Register = (program, ctx: CliContext) => {
  const api = () => new AlertsApi(ctx.client());
  const alerts = program
    .command('alerts')
    .description('alert rules of an environment: who is told when an error needs them (secret key)');

  alerts
    .command('create')
    .description('add a rule')
    .requiredOption('--name <name>', "the rule's label")
    .requiredOption('--when <kind>', 'new_group, regression or frequency', when)
    .option('--events <n>', 'frequency: this many events of one group…', integer('--events', 1, 1_000_000))
    .option('--window <minutes>', '…within this many minutes', integer('--window', 1, 1440))
    .option('--q <search>', 'only groups this search matches (the error list’s search language)')
    .option('--email <addresses>', 'email these addresses (repeat, or separate by commas)', addresses)
    .option('--slack <url>', 'post to this Slack incoming-webhook URL (repeatable)', collect)
    .option(
      '--snooze <minutes>',
      'at most one notification per group within this many minutes (default 30; 0: every time)',
      integer('--snooze', 0, 10_080),
    )
    .option('--disabled', 'create it disabled')
    .option('--env <name>', 'environment name (default: CAIRN_ENV)')
    .option('--json', 'print JSON')
    .action(async (o: CreateFlags) => {
      const body = ruleBody(o);
      ctx.print(await api().create(ctx.envName(o.env), body), Boolean(o.json), ruleDetail);
    });

  const rules = collectionCommands(alerts, ctx, api, ['<id>', 'alr_…']);
  rules.list({
    description: 'rules, oldest first',
    lines: (p) => p.alert_rules.map(ruleLine),
    empty: 'no alert rules',
  });
  rules.get('one rule (its Slack URLs masked)', ruleDetail);
  rules.delete('delete a rule with its firings');
  rules.listOf('firings', {
    description: "a rule's firings of the last 30 days with each action's outcome, newest first",
    fetch: (a, { env, page, id }) => a.listFirings(env, id, page),
    lines: (p) => p.firings.map(firingLine),
    empty: 'no firings',
  });
};
