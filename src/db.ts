// One knex pool per process, small on purpose (CAIRN_DB_POOL_MAX): Heroku's small Postgres plans
// allow 20 connections in all, shared by every web and worker dyno and pg-boss's own pool.
import knex, { type Knex } from 'knex';
import type { Config } from './config.ts';

export type Db = Knex | Knex.Transaction;

export interface DbOptions {
  poolMax?: number;
  applicationName?: string;
}

export function createDb(config: Pick<Config, 'DATABASE_URL' | 'CAIRN_DB_POOL_MAX'>, options: DbOptions = {}): Knex {
  return knex({
    client: 'pg',
    connection: {
      connectionString: config.DATABASE_URL,
      application_name: options.applicationName ?? 'cairn',
      // Fail fast while Postgres is away so requests answer store_unavailable instead of hanging.
      connectionTimeoutMillis: 5000,
      keepAlive: true,
    } as Knex.PgConnectionConfig,
    pool: { min: 0, max: options.poolMax ?? config.CAIRN_DB_POOL_MAX, idleTimeoutMillis: 30_000 },
    acquireConnectionTimeout: 6000,
    // Failures reach callers as errors (and the error middleware logs them once, with the request id).
    log: { warn: () => {}, error: () => {}, deprecate: () => {}, debug: () => {} },
    migrations: migrationConfig,
  });
}

export const migrationConfig: Knex.MigratorConfig = {
  directory: new URL('../migrations', import.meta.url).pathname,
  loadExtensions: ['.ts'],
  tableName: 'knex_migrations',
};

export function isTransaction(db: Db): db is Knex.Transaction {
  return (db as Knex.Transaction).isTransaction === true;
}
