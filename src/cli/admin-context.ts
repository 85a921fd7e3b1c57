// The service's own `cairn`: the API commands' context plus `admin()`, a database handle from
// DATABASE_URL, or from `.data/cairn.env` where `npm start` runs its embedded Postgres.
import type { Knex } from 'knex';
import { loadConfig } from '../config.ts';
import { keyringFromConfig } from '../crypto.ts';
import { createDb } from '../db.ts';
import { createApiContext, embeddedEnv, type CliContext } from './context.ts';
import { CliError, type DbSource } from './errors.ts';

export function createCliContext(
  env: Record<string, string | undefined> = process.env,
): CliContext & { close(): Promise<void> } {
  let db: Knex | undefined;
  let source: DbSource | undefined;
  return {
    ...createApiContext(env),
    async admin() {
      // With nothing configured, talk to the embedded instance that `npm start` runs.
      const settings = env.DATABASE_URL ? env : { ...embeddedEnv(), ...env };
      if (!settings.DATABASE_URL) {
        throw new CliError('set DATABASE_URL to the service database (or start the embedded one with `npm start`)');
      }
      source = env.DATABASE_URL ? 'DATABASE_URL' : 'npm start';
      // Most admin commands need no encryption key; the ones that seal secrets ask for it.
      const hasKey = Boolean(settings.CAIRN_ENCRYPTION_KEY);
      const config = loadConfig({
        ...settings,
        CAIRN_ENCRYPTION_KEY: settings.CAIRN_ENCRYPTION_KEY ?? Buffer.alloc(32).toString('base64'),
      });
      db ??= createDb(config, { poolMax: 2, applicationName: 'cairn-cli' });
      return {
        config,
        db,
        keyring() {
          if (!hasKey)
            throw new CliError('set CAIRN_ENCRYPTION_KEY (the same value the service runs with) for this command');
          return keyringFromConfig(config);
        },
      };
    },
    dbSource: () => source,
    async close() {
      await db?.destroy();
    },
  };
}
