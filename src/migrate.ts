// The release phase (Procfile `release`): schema migrations, pg-boss's own schema, and the queues
// of the job registry. Safe to run from several places at once: knex holds a migration lock and
// pg-boss an advisory lock.
import { pathToFileURL } from 'node:url';
import { loadConfigOrExit, type Config } from './config.ts';
import { createDb } from './db.ts';
import { databaseTlsHint } from './db-errors.ts';
import { createBoss, syncQueues, type Registry } from './jobs/index.ts';
import { queues } from './queues.ts';
import { createLogger, type Logger } from './log.ts';
import { ensurePartitions } from './domain/errors/retention/prune.ts';
import { queueFacetsBackfill } from './domain/errors/facets/backfill.ts';

/**
 * Before the first release, migrations were folded into one per area; knex refuses a database that
 * ran one of the old files ("the migration directory is corrupt"). Say what that means and what
 * to do, rather than knex's words alone.
 */
function explainMissing(err: unknown): never {
  if (err instanceof Error && /migration directory is corrupt/.test(err.message)) {
    throw new Error(
      `${err.message}. This database was created by a pre-release build of Cairn whose migrations were ` +
        'folded into one per area, so it cannot be upgraded in place: pg_dump what you need from it, then ' +
        'recreate it (the embedded database: delete the data folder `npm start` prints) and run `release` again.',
      { cause: err },
    );
  }
  throw err;
}

export async function runMigrations(
  config: Pick<Config, 'DATABASE_URL'>,
  log?: Logger,
  registry: Registry = queues,
): Promise<string[]> {
  const db = createDb(config, { poolMax: 2, applicationName: 'cairn-release' });
  try {
    const [, applied] = (await db.migrate.latest().catch(explainMissing)) as [number, string[]];
    for (const name of applied) log?.info({ migration: name }, 'migrated');
    // Error events' day partitions, a fortnight ahead (the daily prune keeps them ahead after).
    await ensurePartitions(db, new Date());
    const boss = createBoss(config, 'release');
    await boss.start();
    try {
      await syncQueues(boss, registry);
      // Groups' tags and users of events stored before the store kept them, until that is done.
      if (registry === queues) await queueFacetsBackfill(db, boss);
    } finally {
      await boss.stop({ graceful: false, close: true });
    }
    return applied;
  } finally {
    await db.destroy();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const config = loadConfigOrExit();
  const log = createLogger({ name: 'release', level: config.LOG_LEVEL });
  runMigrations(config, log).then(
    (applied) => log.info({ applied: applied.length }, 'release done'),
    (err: unknown) => {
      log.error({ err }, 'release failed');
      const hint = databaseTlsHint(err);
      if (hint) process.stderr.write(`Cairn's release could not reach its database: ${hint}\n`);
      process.exit(1);
    },
  );
}
