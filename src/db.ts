// One knex pool per process, small on purpose: Heroku's smaller Postgres plans allow 20
// connections in all, shared by every web and worker dyno, pg-boss's pools and the worker's
// LISTEN session. CAIRN_DB_MAX_CONNECTIONS bounds a whole process; connectionShares
// splits it.
import knex, { type Knex } from 'knex';
import { ConfigError, type Config } from './config.ts';
import { BoundedClient, clientSettings, statementBounds } from './db-timeouts.ts';

export type Db = Knex | Knex.Transaction;

export type ProcessRole = 'web' | 'worker';

export interface ConnectionShares {
  /** The process's budget: every connection below together. */
  total: number;
  /** knex's pool: requests, handlers (and, while a backup or restore runs, its lock session). */
  knex: number;
  /** pg-boss's pool: transactional handlers, fetching, completing, maintenance. */
  boss: number;
  /** Sessions held open beside the pools (a worker's pg-boss LISTEN). */
  sessions: number;
}

const defaultConnections: Record<ProcessRole, number> = { web: 3, worker: 7 };

/**
 * How a process's connections are split. A web process only inserts jobs through knex (in the
 * request's transaction), so pg-boss needs one. A worker keeps two sessions (pg-boss's LISTEN, and
 * its liveness session: src/jobs/claims/liveness.ts), and its
 * pg-boss pool holds a connection for each transactional handler running (`errors.ingest`, two at
 * a time: domain/errors/queues.ts) plus one for fetching and settling: 3, or 4 when the budget allows; knex gets
 * the rest, and lends one to the environment locks while a backup or restore runs
 * (backups/lock.ts).
 */
export function connectionShares(
  config: Pick<Config, 'CAIRN_DB_MAX_CONNECTIONS'>,
  role: ProcessRole,
): ConnectionShares {
  const total = config.CAIRN_DB_MAX_CONNECTIONS ?? defaultConnections[role];
  if (role === 'web') return { total, knex: total - 1, boss: 1, sessions: 0 };
  if (total < minWorkerConnections)
    throw new ConfigError([
      `CAIRN_DB_MAX_CONNECTIONS is ${total}, and a worker needs at least ${minWorkerConnections} (pg-boss's LISTEN, its liveness session, 3 for pg-boss, 2 for knex): raise it`,
    ]);
  const sessions = 2;
  const boss = Math.min(4, total - sessions - 2);
  return { total, knex: total - sessions - boss, boss, sessions };
}

export const minWorkerConnections = 7;

export interface DbOptions {
  poolMax?: number;
  applicationName?: string;
  /** Whose statement bounds its connections get (db-timeouts.ts); the release phase's unless said. */
  role?: ProcessRole | 'release';
}

export function createDb(config: Pick<Config, 'DATABASE_URL'>, options: DbOptions = {}): Knex {
  const db = knex({
    client: 'pg',
    connection: {
      connectionString: config.DATABASE_URL,
      application_name: options.applicationName ?? 'cairn',
      // Fail fast while Postgres is away so requests answer store_unavailable instead of hanging.
      connectionTimeoutMillis: 5000,
      ...clientSettings(statementBounds[options.role ?? 'release']),
    } as Knex.PgConnectionConfig,
    pool: { min: 0, max: options.poolMax ?? 2, idleTimeoutMillis: 30_000 },
    // Waiting for a free connection (or a new one's connect) ends here: a request's wait on the
    // pool, then on its statement, is what docs/operations.md states as its bound.
    acquireConnectionTimeout: 5000,
    // Failures reach callers as errors (and the error middleware logs them once, with the request id).
    log: { warn: () => {}, error: () => {}, deprecate: () => {}, debug: () => {} },
    migrations: migrationConfig,
  });
  withBoundedClient(db);
  return db;
}

/** knex's pg dialect makes connections from `driver.Client` (knex lib/dialects/postgres/index.js). */
function withBoundedClient(db: Knex): void {
  const client = db.client as { driver: object };
  client.driver = Object.assign(Object.create(client.driver) as object, { Client: BoundedClient });
}

export const migrationConfig: Knex.MigratorConfig = {
  directory: new URL('../migrations', import.meta.url).pathname,
  loadExtensions: ['.ts'],
  tableName: 'knex_migrations',
};

export function isTransaction(db: Db): db is Knex.Transaction {
  return (db as Knex.Transaction).isTransaction === true;
}

/**
 * Statements on one connection, as pg-boss takes them (`executeSql`, `$1` placeholders): a
 * worker's job transaction, `fromKnex(db)`, or rawTransaction's connection.
 */
export interface SqlTx {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

interface RawPool {
  acquireConnection(): Promise<{ query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> }>;
  releaseConnection(connection: unknown): Promise<unknown>;
  destroyRawConnection(connection: unknown): Promise<unknown>;
}

/**
 * `fn` in a transaction on one connection of `db`'s pool, without knex's transaction machinery:
 * BEGIN, its statements, COMMIT (ROLLBACK on a throw). For short hot paths (the intake's named
 * captures), where knex's transaction object cost ~0.08 ms of the web's CPU per event
 * (bench/errors.ts). A connection that failed is destroyed, never handed back.
 */
export async function rawTransaction<T>(db: Knex, fn: (tx: SqlTx) => Promise<T>): Promise<T> {
  const pool = db.client as RawPool;
  const conn = await pool.acquireConnection();
  const tx: SqlTx = { executeSql: (text, values) => conn.query(text, values) };
  let broken = false;
  try {
    await conn.query('begin');
    const result = await fn(tx);
    await conn.query('commit');
    return result;
  } catch (err) {
    await conn.query('rollback').catch(() => (broken = true));
    throw err;
  } finally {
    if (broken) await pool.destroyRawConnection(conn).catch(() => undefined);
    else await pool.releaseConnection(conn).catch(() => undefined);
  }
}
