// `cairn webhooks create|list|get|update|delete|rotate-secret|deliveries|redeliver` over the HTTP
// API (docs/api.md "Webhooks", secret key with webhooks:read or webhooks:write).
import { eventTypes, type EventType } from '../../contract/webhook-types.ts';
import { WebhooksApi, type Delivery, type Endpoint, type EndpointUpdate } from '../../sdk/webhooks.ts';
import type { Command } from 'commander';
import { CliError, type CliContext, type Register } from '../context.ts';
import { collectionCommands, type CollectionCommands, type EnvFlags } from '../resource-commands.ts';

/** An event type, or `*` for every one. */
type Subscribed = EventType | '*';

const isEventType = (t: string): t is Subscribed => t === '*' || (eventTypes as readonly string[]).includes(t);

/** `a,b` → `["a", "b"]`, checked here so a typo is answered with the list of types. */
const eventList = (v: string): Subscribed[] => {
  const types = v
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = types.filter((t) => !isEventType(t));
  if (types.length === 0 || unknown.length > 0)
    throw new CliError(
      `--events takes event types separated by commas, or * for all${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}; the types are ${eventTypes.join(', ')}`,
    );
  return types.filter(isEventType);
};

const endpointLine = (e: Endpoint) =>
  `${e.id}  ${e.state.padEnd(8)} ${e.url}  ${e.event_types.join(',')}${e.disabled_reason ? `  (${e.disabled_reason})` : ''}`;

const endpointDetail = (e: Endpoint) =>
  [
    endpointLine(e),
    ...(e.description ? [`  description: ${e.description}`] : []),
    `  created ${e.create_time}, updated ${e.update_time}`,
  ].join('\n');

// The secret exists in this answer only: the service keeps it sealed and never shows it again.
const withSecret = (e: Endpoint) =>
  [
    endpointDetail(e),
    '',
    `  signing secret: ${e.secret ?? '(none in the answer)'}`,
    '  This secret is shown only once: store it now (rotate-secret makes a new one).',
  ].join('\n');

const deliveryLine = (d: Delivery) => {
  const last = d.attempts.at(-1);
  const outcome =
    [last?.status_code !== undefined ? `HTTP ${last.status_code}` : undefined, last?.error].filter(Boolean).join(' ') ||
    '-';
  return `${d.id}  ${d.event_type}  ${d.state.padEnd(9)} ${d.attempts.length} attempt(s)  last: ${outcome}  next: ${d.next_attempt_time ?? '-'}`;
};

type Endpoints = CollectionCommands<WebhooksApi>;

function printSecret(ctx: CliContext, e: Endpoint, json: boolean): void {
  ctx.print(e, json, withSecret);
  // On stderr, so the JSON on stdout stays clean.
  if (json) ctx.progress('note: the secret is shown only once; store it now');
}

function registerEndpointReads(hooks: Command, ctx: CliContext, api: () => WebhooksApi, endpoints: Endpoints): void {
  hooks
    .command('create')
    .description('add an endpoint; prints its signing secret, shown only this once')
    .requiredOption('--url <url>', 'where messages are POSTed (a live environment takes public https URLs only)')
    .requiredOption('--events <types>', 'event types separated by commas, or * for all', eventList)
    .option('--description <text>', 'a note for people')
    .option('--env <name>', 'environment name (default: CAIRN_ENV)')
    .option('--json', 'print JSON')
    .action(async (o: EnvFlags & { url: string; events: Subscribed[]; description?: string }) => {
      const created = await api().create(ctx.envName(o.env), {
        url: o.url,
        event_types: o.events,
        ...(o.description !== undefined ? { description: o.description } : {}),
      });
      printSecret(ctx, created, Boolean(o.json));
    });

  endpoints.list({
    description: 'endpoints, oldest first',
    lines: (p) => p.webhook_endpoints.map(endpointLine),
    empty: 'no webhook endpoints',
  });
  endpoints.get('one endpoint (never its secret)', endpointDetail);
}

function registerEndpointWrites(hooks: Command, ctx: CliContext, api: () => WebhooksApi, endpoints: Endpoints): void {
  hooks
    .command('update')
    .description('change the URL, event types, description or state; only what is given changes')
    .argument('<id>', 'whep_…')
    .option('--url <url>', 'new URL')
    .option('--events <types>', 'event types separated by commas, or * for all', eventList)
    .option('--description <text>', 'new description')
    .option('--enable', 'enable (clears the reason it was disabled)')
    .option('--disable', 'disable: nothing is sent until it is enabled')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(
      async (
        id: string,
        o: EnvFlags & {
          url?: string;
          events?: Subscribed[];
          description?: string;
          enable?: boolean;
          disable?: boolean;
        },
      ) => {
        if (o.enable && o.disable) throw new CliError('give --enable or --disable, not both');
        const patch: EndpointUpdate = {
          ...(o.url !== undefined ? { url: o.url } : {}),
          ...(o.events !== undefined ? { event_types: o.events } : {}),
          ...(o.description !== undefined ? { description: o.description } : {}),
          ...(o.enable ? { state: 'enabled' as const } : {}),
          ...(o.disable ? { state: 'disabled' as const } : {}),
        };
        if (Object.keys(patch).length === 0)
          throw new CliError('nothing to change: give --url, --events, --description, --enable or --disable');
        ctx.print(await api().update(ctx.envName(o.env), id, patch), Boolean(o.json), endpointDetail);
      },
    );

  endpoints.delete('delete an endpoint with its deliveries; nothing more is sent to it');
}

function registerDeliveryCommands(hooks: Command, ctx: CliContext, api: () => WebhooksApi, endpoints: Endpoints): void {
  hooks
    .command('rotate-secret')
    .description('a new signing secret, shown only this once; for 24 hours messages are signed with both')
    .argument('<id>', 'whep_…')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (id: string, o: EnvFlags) => {
      printSecret(ctx, await api().rotateSecret(ctx.envName(o.env), id), Boolean(o.json));
    });

  endpoints.listOf('deliveries', {
    description: "an endpoint's deliveries of the last 30 days with their attempts, newest first",
    fetch: (a, { env, page, id }) => a.listDeliveries(env, id, page),
    lines: (p) => p.deliveries.map(deliveryLine),
    empty: 'no deliveries',
  });

  hooks
    .command('redeliver')
    .description('one more attempt of a settled delivery, with the same webhook-id and body')
    .argument('<endpoint-id>', 'whep_…')
    .argument('<message-id>', 'whmsg_… (the id in `deliveries`)')
    .option('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (endpointId: string, messageId: string, o: EnvFlags) => {
      ctx.print(await api().redeliver(ctx.envName(o.env), endpointId, messageId), Boolean(o.json), deliveryLine);
    });
}

export const register: Register = (program, ctx) => {
  const api = () => new WebhooksApi(ctx.client());
  const hooks = program
    .command('webhooks')
    .description('webhook endpoints of an environment and their deliveries (secret key)');
  const endpoints = collectionCommands(hooks, ctx, api, ['<id>', 'whep_…']);

  registerEndpointReads(hooks, ctx, api, endpoints);
  registerEndpointWrites(hooks, ctx, api, endpoints);
  registerDeliveryCommands(hooks, ctx, api, endpoints);
};
