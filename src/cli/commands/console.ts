// `cairn console --env <env name>`: a one-use link (5 minutes) that opens the console in a browser
// with this key's environment and scopes (docs/api.md "Console"). Only the link goes to stdout, so
// `open "$(cairn console)"` works; the key itself never reaches the browser.
import type { Command } from 'commander';
import type { ConsoleLink } from '../../domain/console/links.ts';
import type { CliContext } from '../context.ts';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('console')
    .description("print a one-use link (valid 5 minutes) that opens the console with this key's scopes")
    .option('--env <name>', 'environment (default: CAIRN_ENV)')
    .option('--json', 'print JSON ({"url", "expire_time"})')
    .action(async (opts: { env?: string; json?: boolean }) => {
      const env = ctx.envName(opts.env);
      const link = await ctx.client().request<ConsoleLink>('POST', `/v1/${env}/console_links`);
      ctx.print(link, Boolean(opts.json), (l: ConsoleLink) => l.url);
    });
}
