// The `cairn` command. API commands go through the SDK (CAIRN_API_URL, CAIRN_SECRET_KEY);
// `cairn admin` commands are the operator's and use the database directly.
import { Command, CommanderError } from 'commander';
import { registerAdmin } from './commands/admin.ts';
import { register as registerBackups } from './commands/backups.ts';
import { register as registerConsole } from './commands/console.ts';
import { register as registerErrorGroups } from './commands/error-groups.ts';
import { register as registerIdentity, registerAdmin as registerIdentityAdmin } from './commands/identity.ts';
import { registerOAuthAdmin } from './commands/oauth.ts';
import { registerOutbox } from './commands/outbox.ts';
import { register as registerSocial } from './commands/social.ts';
import { register as registerWebhooks } from './commands/webhooks.ts';
import { createCliContext, describeError } from './context.ts';

export async function main(argv: string[]): Promise<number> {
  const ctx = createCliContext();
  const program = new Command('cairn')
    .description('Cairn: sign-in for end users, Postgres backups and error tracking')
    .version('0.1.0')
    .showHelpAfterError()
    .exitOverride();
  const admin = registerAdmin(program, ctx);
  registerIdentityAdmin(admin, ctx);
  registerOAuthAdmin(admin, ctx);
  registerOutbox(admin, ctx);
  registerIdentity(program, ctx);
  registerSocial(program, ctx);
  registerErrorGroups(program, ctx);
  registerBackups(program, ctx);
  registerWebhooks(program, ctx);
  registerConsole(program, ctx);
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    process.stderr.write(`${describeError(err, ctx.dbSource())}\n`);
    return 1;
  } finally {
    await ctx.close();
  }
}

process.exitCode = await main(process.argv);
