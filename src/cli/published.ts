// The `cairn` of the @cairnhq/cli package (scripts/packages): the API commands and the offline
// `backups decrypt`, with no database driver. `cairn admin` belongs to the service's own folder.
import { createApiContext } from './context.ts';
import { createProgram, registerApiCommands, runProgram } from './program.ts';

const ctx = createApiContext();
const program = createProgram();
registerApiCommands(program, ctx);
program.addHelpText('after', "\nOperator commands (cairn admin …) run in the service's folder: npx cairn admin --help");
process.exitCode = await runProgram(program, ctx, process.argv);
