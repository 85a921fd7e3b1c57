// One knex pool per process, small on purpose: Heroku's smaller Postgres plans allow 20
// connections in all, shared by every web and worker dyno, pg-boss's pools and the worker's
// LISTEN and lock sessions. CAIRN_DB_MAX_CONNECTIONS bounds a whole process; connectionShares
// splits it.
import knex, { type Knex } from 'knex';
import type { Config } from './config.ts';

export type Db = Knex | Knex.Transaction;

export type ProcessRole = 'web' | 'worker';

export interface ConnectionShares {
  /** The process's budget: every connection below together. */
  total: number;
  /** knex's pool: requests, handlers. */
  knex: number;
  /** pg-boss's pool: fetching, completing, maintenance. */
  boss: number;
  /** Sessions held open beside the pools (worker: pg-boss's LISTEN, the backup lock session). */
  sessions: number;
}

const defaultConnections: Record<ProcessRole, number> = { web: 4, worker: 6 };

/**
 * How a process's connections are split. A web process only inserts jobs through knex (in the
 * request's transaction), so pg-boss needs one. A worker keeps pg-boss's LISTEN session and, while
 * a backup or restore runs, the session that holds the environment locks (backups/lock.ts); of the
 * rest, a third (at least one) goes to pg-boss, whose queries are all short, and the rest to knex.
 */
export function connectionShares(
  config: Pick<Config, 'CAIRN_DB_MAX_CONNECTIONS'>,
  role: ProcessRole,
): ConnectionShares {
  const total = config.CAIRN_DB_MAX_CONNECTIONS ?? defaultConnections[role];
  if (role === 'web') return { total, knex: total - 1, boss: 1, sessions: 0 };
  const sessions = 2;
  const boss = Math.max(1, Math.floor((total - sessions) / 3));
  return { total, knex: total - sessions - boss, boss, sessions };
}

export interface DbOptions {
  poolMax?: number;
  applicationName?: string;
}

export function createDb(config: Pick<Config, 'DATABASE_URL'>, options: DbOptions = {}): Knex {
  return knex({
    client: 'pg',
    connection: {
      connectionString: config.DATABASE_URL,
      application_name: options.applicationName ?? 'cairn',
      // Fail fast while Postgres is away so requests answer store_unavailable instead of hanging.
      connectionTimeoutMillis: 5000,
      keepAlive: true,
    } as Knex.PgConnectionConfig,
    pool: { min: 0, max: options.poolMax ?? 2, idleTimeoutMillis: 30_000 },
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
