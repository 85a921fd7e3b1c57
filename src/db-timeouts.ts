// How long Cairn waits on its own database. Two bounds per statement: the server's
// `statement_timeout` cancels a slow statement cleanly (SQLSTATE 57014, the connection lives on),
// and the client's `query_timeout`, one second longer, ends the wait for a server that does not
// answer at all (a frozen network path, where TCP keepalive sees nothing wrong: the path's last hop
// still acknowledges). A connection whose statement timed out on the client is destroyed, never
// reused: node-postgres keeps the unanswered statement active, so every later statement on it
// would queue behind it (pg lib/client.js, "Query read timeout"). Long operations raise both bounds
// for their own statements with `longStatements`.
import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';

export interface StatementBounds {
  /** The server's statement_timeout, ms; 0: none. */
  statementMs: number;
  /** Ends a transaction left idle this long (its locks held by a client that stopped talking), ms; 0: none. */
  idleInTransactionMs: number;
}

/**
 * Web requests: a statement gets 5 s, so a request waiting on a database that stopped answering
 * ends within about 6 s of its statement (docs/operations.md). Workers: 10 s for a job's ordinary
 * statement, so a job on a frozen connection fails and is retried instead of hanging; maintenance
 * jobs raise it with longStatements. The release phase (migrations) has no bound: a migration may
 * rewrite a large table, and the platform bounds the release phase itself.
 */
export const statementBounds = {
  web: { statementMs: 5000, idleInTransactionMs: 60_000 },
  worker: { statementMs: 10_000, idleInTransactionMs: 5 * 60_000 },
  release: { statementMs: 0, idleInTransactionMs: 0 },
} satisfies Record<string, StatementBounds>;

/**
 * Whether pg-boss's bound on a transactional handler's transaction (the job's expiry plus 5 s)
 * adds nothing to the worker session's own. Before Postgres 17 pg-boss sets
 * idle_in_transaction_session_timeout to the tighter of its bound and the session's: where its
 * own is not the tighter, a no-op that still costs a statement per batch reading the pg_settings
 * view (0.5 ms of Postgres per stored batch of events). From 17 it sets transaction_timeout,
 * which the session does not carry, so it is kept there.
 */
export function bossBoundRedundant(expireInSeconds: number | undefined, serverVersionNum: number): boolean {
  return (
    serverVersionNum < 170000 &&
    expireInSeconds !== undefined &&
    expireInSeconds * 1000 + 5000 >= statementBounds.worker.idleInTransactionMs
  );
}

/** The client waits this much longer than the server's bound, so a slow statement is the server's to cancel. */
export const clientMarginMs = 1000;

/** The most a statement run inside longStatements may take: maintenance (prunes, VACUUM). */
export const longStatementMs = 30 * 60_000;

/** Session settings sent at connect (libpq's `options`, as node-postgres passes them). */
export function sessionOptions(bounds: StatementBounds): string {
  return `-c statement_timeout=${bounds.statementMs} -c idle_in_transaction_session_timeout=${bounds.idleInTransactionMs}`;
}

/** pg connection settings for these bounds: the client's wait, and TCP keepalive after 10 s idle. */
export function clientSettings(bounds: StatementBounds) {
  return {
    options: sessionOptions(bounds),
    ...(bounds.statementMs > 0 ? { query_timeout: bounds.statementMs + clientMarginMs } : {}),
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}

/** pg.Pool's settings for a role (pg-boss hands its options to pg.Pool): the bounds and the client below. */
export function boundedPool(role: keyof typeof statementBounds) {
  return { ...clientSettings(statementBounds[role]), Client: BoundedClient };
}

const long = new AsyncLocalStorage<{ ms: number }>();

/**
 * Runs `fn` with its statements bounded by `ms` instead of the process's bound (server and client
 * alike): a prune or a VACUUM may legitimately run for minutes.
 */
export function longStatements<T>(fn: () => PromiseLike<T>, ms: number = longStatementMs): Promise<T> {
  // Awaited inside the context: a knex builder runs only when awaited, so returned as-is it would
  // run outside it.
  return long.run({ ms }, async () => await fn());
}

type QueryArgs = [unknown, ...unknown[]];
const raised = Symbol('statement_timeout raised');
const generation = Symbol('raises so far');

/**
 * node-postgres's Client with the rules above: a statement the client timed out destroys its
 * connection, and a statement inside longStatements runs after `SET statement_timeout` and with
 * its own client-side wait (the next ordinary statement on that connection resets it first).
 *
 * The raised bound counts as gone only once a `RESET` ran outside a transaction (the server's
 * ReadyForQuery status after it, `I`: PostgreSQL protocol docs, "ReadyForQuery"): a RESET inside a
 * transaction that then rolls back is undone with it, and the connection would go back to its
 * pool with the 30-minute bound. Until then each ordinary statement is preceded by a RESET (only a
 * transaction begun inside longStatements and continued outside it pays for these).
 */
export class BoundedClient extends pg.Client {
  private [raised] = false;
  private [generation] = 0;

  override query(...args: QueryArgs): never {
    const ctx = long.getStore() ?? (isBossMaintenance(args[0]) ? { ms: longStatementMs } : undefined);
    if (ctx) {
      this[raised] = true;
      this[generation] += 1;
      void super.query(`set statement_timeout = ${Math.floor(ctx.ms)}`).catch(() => undefined);
      args[0] = asConfig(args[0], ctx.ms + clientMarginMs);
    } else if (this[raised]) {
      this.resetBound();
    }
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (err: unknown, res: unknown) => {
        this.destroyIfTimedOut(err);
        (callback as (e: unknown, r: unknown) => void)(err, res);
      };
    }
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    if (result && typeof (result as Promise<unknown>).then === 'function')
      return (result as Promise<unknown>).catch((err: unknown) => {
        this.destroyIfTimedOut(err);
        throw err;
      }) as never;
    return result as never;
  }

  /** Resets the raised bound; clears the flag once a reset took effect outside a transaction, with no raise since. */
  private resetBound(): void {
    const gen = this[generation];
    void super.query('reset statement_timeout').then(
      () => {
        if (gen === this[generation] && this.getTransactionStatus() === 'I') this[raised] = false;
      },
      () => undefined,
    );
  }

  private destroyIfTimedOut(err: unknown): void {
    if (err instanceof Error && err.message === 'Query read timeout')
      (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  }
}

/**
 * pg-boss's maintenance, recognised by its text as pg-boss writes it:
 * - deleting old jobs, failing expired ones, the supervisor's passes run as one text, BEGIN; SET
 *   LOCAL lock_timeout …; the statements; COMMIT (pg-boss src/plans.ts `transaction`, `locked`):
 *   an unbatched DELETE over a queue's backlog may take minutes, and cancelled at a worker's 10 s
 *   it would never finish;
 * - its index upkeep (pg-boss src/boss.ts `#reindex`, src/bam.ts; plans.ts `reindexIndex`,
 *   `dropIndexConcurrently`, `bamHealDrop`, and its background migrations' `CREATE INDEX
 *   CONCURRENTLY`): a rebuild of a large job index takes longer than 10 s, and a cancelled
 *   CONCURRENTLY build leaves an invalid `*_ccnew` index behind (PostgreSQL docs, REINDEX,
 *   "Rebuilding Indexes Concurrently").
 * Its job fetches and completions are single statements and keep the worker's bound.
 */
export function isBossMaintenance(query: unknown): boolean {
  return typeof query === 'string' && bossMaintenance.some((re) => re.test(query));
}

const bossMaintenance = [
  /^\s*BEGIN;\s*SET LOCAL lock_timeout/,
  /^\s*REINDEX\s+INDEX\s+CONCURRENTLY\s/,
  /^\s*DROP\s+INDEX\s+CONCURRENTLY\s/,
  /^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s/,
];

function asConfig(query: unknown, timeoutMs: number): unknown {
  if (typeof query === 'string') return { text: query, query_timeout: timeoutMs };
  if (query && typeof query === 'object' && !('submit' in query)) return { ...query, query_timeout: timeoutMs };
  return query;
}
