// `cairn admin console-sessions list|revoke --env …`: the live console sessions of an environment,
// and ending them from outside the browser. A session opened from an operator's link has no key
// whose revocation would end it, so without this only that browser's "Sign out" could; a revoked
// session's next page goes to the sign-in page at once. Tokens are stored hashed and never shown.
import type { Command } from 'commander';
import { listConsoleSessions, revokeConsoleSessions, type ConsoleSessionView } from '../../domain/console/sessions.ts';
import { requireEnv } from '../../domain/tenancy/envs.ts';
import { CliError, type CliContext } from '../context.ts';

const line = (s: ConsoleSessionView) =>
  `${s.id}  opened by ${s.opened_by}${s.key_id ? ` (${s.key_id})` : ''}  created ${s.create_time}  last used ${s.last_use_time}  expires ${s.expire_time}`;

export function registerConsoleSessions(admin: Command, ctx: CliContext): void {
  const sessions = admin
    .command('console-sessions')
    .description("an environment's live console sessions (signed-in browsers)");
  sessions
    .command('list')
    .description('the live sessions, last used first: id, how each was opened (link or key), times; never a token')
    .requiredOption('--env <name>', 'environment name')
    .option('--json', 'print JSON')
    .action(async (opts: { env: string; json?: boolean }) => {
      const { db } = await ctx.admin();
      const env = await requireEnv(db, opts.env);
      const list = await listConsoleSessions(db, env.id);
      ctx.print({ sessions: list }, Boolean(opts.json), () => list.map(line).join('\n') || 'no live console sessions');
    });
  sessions
    .command('revoke')
    .description('end a session (by id) or every session of the environment; its browser is signed out at once')
    .argument('[id]', 'session id (cs_…), from `list`')
    .requiredOption('--env <name>', 'environment name')
    .option('--all', 'every live session of the environment')
    .option('--json', 'print JSON')
    .action(async (id: string | undefined, opts: { env: string; all?: boolean; json?: boolean }) => {
      if (Boolean(id) === Boolean(opts.all)) throw new CliError('name one session id, or --all (not both)');
      const { db } = await ctx.admin();
      const env = await requireEnv(db, opts.env);
      const revoked = await revokeConsoleSessions(db, env.id, id);
      if (id && revoked.length === 0)
        throw new CliError(
          `no live console session ${id} in ${opts.env}; list them with \`cairn admin console-sessions list --env ${opts.env}\``,
        );
      ctx.print({ revoked }, Boolean(opts.json), () =>
        revoked.length ? `revoked ${revoked.join(', ')}` : 'no live console sessions',
      );
    });
}
