// `cairn admin breached import FILE` for the operator (wired under `admin`): stages a range dump in
// the database and queues the merge.
import { createReadStream } from 'node:fs';
import { rangePrefixOf, type ImportFormat } from '../../domain/identity/breached/format.ts';
import { stageImport } from '../../domain/identity/breached/import.ts';
import { createBoss, Jobs } from '../../jobs/index.ts';
import { queues } from '../../queues.ts';
import { CliError, type Register } from '../context.ts';

/** Wired under `cairn admin`: `cairn admin breached import FILE [--format hibp|plain]`. */
export const registerBreachedAdmin: Register = (admin, ctx) => {
  admin
    .command('breached')
    .description('the local breached-password store')
    .command('import')
    .description(
      'load a HIBP range dump (SHA1:COUNT, or SUFFIX:COUNT in a file named after its prefix) or a plain password list; a worker merges it',
    )
    .argument('<file>', 'path of the file')
    .option('--format <format>', 'hibp or plain', 'hibp')
    .option('--json', 'print JSON')
    .action(async (file: string, o: { format: string; json?: boolean }) => {
      if (o.format !== 'hibp' && o.format !== 'plain') throw new CliError('--format is hibp or plain');
      const { config, db } = await ctx.admin();
      const boss = createBoss(config, 'web');
      await boss.start();
      try {
        const staged = await stageImport(
          db,
          new Jobs(boss, queues),
          createReadStream(file),
          o.format as ImportFormat,
          rangePrefixOf(file),
        );
        ctx.print(
          staged,
          Boolean(o.json),
          (s: typeof staged) => `import ${s.id}: ${s.entries} hashes staged; a worker merges them now`,
        );
      } finally {
        await boss.stop({ graceful: false, close: true });
      }
    });
};
