// The statement bounds of each role's connections (src/db-timeouts.ts), on the real Postgres: a
// web statement longer than its bound is cancelled by the server as store_unavailable, the same
// statement inside longStatements runs to its end, and the connection's next ordinary statement
// is bounded again; the release phase's connections have no bound, for migrations.
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db.ts';
import {
  bamHealDrop,
  completeJobs,
  deletion,
  dropIndexConcurrently,
  failJobsByTimeout,
  fetchNextJob,
  insertJobs,
  reindexIndex,
} from 'pg-boss/dist/plans.js';
import { bossBoundRedundant, isBossMaintenance, longStatements, statementBounds } from '../../src/db-timeouts.ts';
import { isStoreUnavailable } from '../../src/app-error.ts';
import { createHarness, type Harness } from '../support/harness.ts';

let h: Harness;
const dbs: Knex[] = [];
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await Promise.all(dbs.map((db) => db.destroy()));
  await h?.close();
});

/** One connection, so every statement below meets the same session. */
function open(role: 'web' | 'worker' | 'release'): Knex {
  const db = createDb(h.config, { poolMax: 1, role });
  dbs.push(db);
  return db;
}

const setting = async (db: Knex, name: string) =>
  ((await db.raw<{ rows: Record<string, string>[] }>(`show ${name}`)).rows[0] ?? {})[name];

describe('statement bounds', () => {
  it("cancels a web statement past its bound, lets longStatements run one, then bounds the connection's next again", async () => {
    const db = open('web');
    expect(await setting(db, 'statement_timeout')).toBe('5s');
    expect(await setting(db, 'idle_in_transaction_session_timeout')).toBe('1min');
    const sleep = `select pg_sleep(${(statementBounds.web.statementMs + 500) / 1000})`;

    const cancelled = await db.raw(sleep).catch((err: unknown) => err);
    expect((cancelled as { code?: string }).code).toBe('57014');
    expect(isStoreUnavailable(cancelled)).toBe(true);

    await expect(longStatements(() => db.raw(sleep))).resolves.toBeDefined();
    expect(await longStatements(() => setting(db, 'statement_timeout'))).toBe('30min');
    expect(await setting(db, 'statement_timeout')).toBe('5s');
  }, 30_000);

  it('bounds a connection again after a transaction begun inside longStatements rolled back past an ordinary statement', async () => {
    const db = open('worker');
    await longStatements(() => db.raw('begin'));
    await db.raw('select 1');
    await db.raw('rollback');
    // The RESET sent with `select 1` ran inside the transaction, and the rollback undid it.
    expect(await setting(db, 'statement_timeout')).toBe('10s');
    expect(await setting(db, 'statement_timeout')).toBe('10s');
    // A commit keeps what the transaction reset; the connection's next statement is bounded too.
    await longStatements(() => db.raw('begin'));
    await db.raw('select 1');
    await db.raw('commit');
    expect(await setting(db, 'statement_timeout')).toBe('10s');
    expect(await longStatements(() => setting(db, 'statement_timeout'))).toBe('30min');
    expect(await setting(db, 'statement_timeout')).toBe('10s');
  });

  it('gives workers 10 s and the release phase no bound', async () => {
    expect(await setting(open('worker'), 'statement_timeout')).toBe('10s');
    expect(await setting(open('worker'), 'idle_in_transaction_session_timeout')).toBe('5min');
    expect(await setting(open('release'), 'statement_timeout')).toBe('0');
  });

  it("leaves pg-boss's transaction bound off only where the worker session's own is the tighter", async () => {
    const version = Number(
      (await h.db.raw<{ rows: { v: string }[] }>('select current_setting($$server_version_num$$) as v')).rows[0]!.v,
    );
    // The ingest queue: 15 min + 5 s against the session's 5 min, on this server (15).
    expect(version).toBeLessThan(170000);
    expect(bossBoundRedundant(15 * 60, version)).toBe(true);
    // A queue expiring sooner than the session's idle bound keeps pg-boss's tighter one.
    expect(bossBoundRedundant(60, version)).toBe(false);
    expect(bossBoundRedundant(undefined, version)).toBe(false);
    // Postgres 17 bounds the whole transaction (transaction_timeout), which the session lacks.
    expect(bossBoundRedundant(15 * 60, 170000)).toBe(false);
  });

  it("knows pg-boss's maintenance texts (long bound) from its job statements (the worker's bound), as pg-boss writes them", () => {
    expect(isBossMaintenance(deletion('pgboss', 'job', ['errors.ingest'], false))).toBe(true);
    expect(isBossMaintenance(failJobsByTimeout('pgboss', 'job', ['errors.ingest'], false))).toBe(true);
    const fetch = fetchNextJob({ schema: 'pgboss', table: 'job', name: 'errors.ingest', limit: 4 } as never);
    expect(isBossMaintenance(typeof fetch === 'string' ? fetch : fetch.text)).toBe(false);
    expect(isBossMaintenance(completeJobs('pgboss', 'job'))).toBe(false);
    expect(isBossMaintenance(insertJobs('pgboss', { table: 'job', name: 'errors.ingest' } as never))).toBe(false);
    expect(isBossMaintenance({ text: 'BEGIN; SET LOCAL lock_timeout = 1' })).toBe(false);
  });

  it("gives pg-boss's index rebuilds and its cleanup of their leftovers the long bound, as pg-boss writes them", () => {
    expect(isBossMaintenance(reindexIndex('pgboss', 'job_i1'))).toBe(true);
    expect(isBossMaintenance(dropIndexConcurrently('pgboss', 'job_i1_ccnew'))).toBe(true);
    const heal = bamHealDrop('pgboss', 'CREATE INDEX CONCURRENTLY IF NOT EXISTS job_i9 ON pgboss.job (name)');
    expect(heal).not.toBeNull();
    expect(isBossMaintenance(heal)).toBe(true);
    expect(isBossMaintenance('CREATE INDEX CONCURRENTLY IF NOT EXISTS job_i9 ON pgboss.job (name)')).toBe(true);
    // Anchored: a statement that only mentions them keeps the worker's bound.
    expect(isBossMaintenance("select 'REINDEX INDEX CONCURRENTLY pgboss.job_i1'")).toBe(false);
    expect(isBossMaintenance('DROP INDEX pgboss.job_i1')).toBe(false);
  });
});
