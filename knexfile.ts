// knex CLI entry: the same config loader and migration settings as the app.
import { loadConfig } from './src/config.ts';
import { migrationConfig } from './src/db.ts';

const config = loadConfig();

export default {
  client: 'pg',
  connection: config.DATABASE_URL,
  pool: { min: 0, max: 2 },
  migrations: migrationConfig,
};
