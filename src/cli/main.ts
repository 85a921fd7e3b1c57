// The service's `cairn` (npx cairn in its folder): the API commands through the SDK
// (CAIRN_API_URL, CAIRN_SECRET_KEY), and `cairn admin`, the operator's, on the database directly.
import { createCliContext } from './admin-context.ts';
import { registerAdmin } from './commands/admin.ts';
import { registerBreachedAdmin } from './commands/breached.ts';
import { registerConsoleSessions } from './commands/console-sessions.ts';
import { registerOAuthAdmin } from './commands/oauth.ts';
import { registerOutbox } from './commands/outbox.ts';
import { createProgram, registerApiCommands, runProgram } from './program.ts';

export async function main(argv: string[]): Promise<number> {
  const ctx = createCliContext();
  const program = createProgram();
  const admin = registerAdmin(program, ctx);
  registerBreachedAdmin(admin, ctx);
  registerOAuthAdmin(admin, ctx);
  registerOutbox(admin, ctx);
  registerConsoleSessions(admin, ctx);
  registerApiCommands(program, ctx);
  return runProgram(program, ctx, argv);
}

process.exitCode = await main(process.argv);
