// `cairn admin oauth-clients create|list` (docs/api.md "The operator CLI"): OAuth clients are
// registered by the operator, in the database, never over the API. Device-grant clients are
// public: the answer holds the client_id and no secret.
import type { Command } from 'commander';
import { clientResource, createOAuthClient } from '../../domain/oauth/clients.ts';
import { listClients } from '../../domain/oauth/queries.ts';
import { requireEnv } from '../../domain/tenancy/envs.ts';
import type { CliContext } from '../context.ts';

const collect = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
];

export function registerOAuthAdmin(admin: Command, ctx: CliContext): void {
  const clients = admin.command('oauth-clients').description('OAuth clients (device authorization grant)');
  clients
    .command('create')
    .description('register an OAuth client; users see its name when they approve it')
    .requiredOption('--env <name>', 'environment name')
    .requiredOption('--name <name>', 'the name shown on the approval page')
    .requiredOption('--grant <grant>', 'allowed grant (repeatable): device_code', collect)
    .option('--scopes <list>', 'comma-separated scopes it may ask for', collect)
    .option('--json', 'print JSON')
    .action(async (o: { env: string; name: string; grant: string[]; scopes?: string[]; json?: boolean }) => {
      const { db } = await ctx.admin();
      const env = await requireEnv(db, o.env);
      const out = clientResource(
        await createOAuthClient(db, env.id, { name: o.name, grants: o.grant, scopes: o.scopes ?? [] }),
      );
      ctx.print(
        out,
        Boolean(o.json),
        (c: typeof out) =>
          `${c.client_id}  ${c.name}\ngrants: ${c.grant_types.join(' ')}  scopes: ${c.scopes.join(' ') || '(none)'}\npublic client: no secret`,
      );
    });
  clients
    .command('list')
    .description("list an environment's OAuth clients")
    .requiredOption('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (o: { env: string; json?: boolean }) => {
      const { db } = await ctx.admin();
      const env = await requireEnv(db, o.env);
      const list = (await listClients(db, env.id)).map(clientResource);
      ctx.print(
        { oauth_clients: list },
        Boolean(o.json),
        (x: { oauth_clients: typeof list }) =>
          x.oauth_clients
            .map((c) => `${c.client_id}  ${c.name}  ${c.grant_types.join(',')}${c.revoke_time ? '  revoked' : ''}`)
            .join('\n') || 'no OAuth clients',
      );
    });
}
