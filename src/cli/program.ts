// The `cairn` program: the API commands every build has, and the run loop that turns a failure into
// its cause and next step (errors.ts) and an exit code.
import { Command, CommanderError } from 'commander';
import { register as registerAlerts } from './commands/alerts.ts';
import { register as registerBackups } from './commands/backups/index.ts';
import { register as registerConsole } from './commands/console.ts';
import { register as registerErrorGroups } from './commands/errors.ts';
import { register as registerIdentity } from './commands/identity.ts';
import { register as registerSocial } from './commands/social.ts';
import { register as registerWebhooks } from './commands/webhooks.ts';
import { cliVersion, describeError, type CliContext } from './context.ts';

export function createProgram(): Command {
  return new Command('cairn')
    .description('Cairn: sign-in for end users, Postgres backups and error tracking')
    .version(cliVersion)
    .showHelpAfterError()
    .exitOverride();
}

/** The commands that call the HTTP API (and the offline `backups decrypt`). */
export function registerApiCommands(program: Command, ctx: CliContext): void {
  registerIdentity(program, ctx);
  registerSocial(program, ctx);
  registerErrorGroups(program, ctx);
  registerBackups(program, ctx);
  registerWebhooks(program, ctx);
  registerAlerts(program, ctx);
  registerConsole(program, ctx);
}

export async function runProgram(
  program: Command,
  ctx: CliContext & { close?(): Promise<void> },
  argv: string[],
): Promise<number> {
  // `cairn … | head` closes the pipe early: that is the reader's choice, not a failure to report.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    process.stderr.write(`${describeError(err, ctx.dbSource())}\n`);
    return 1;
  } finally {
    await ctx.close?.();
  }
}
