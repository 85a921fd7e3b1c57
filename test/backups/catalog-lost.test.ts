// The catalog record never costs a backup: its session survives the database's idle timeout, a
// session terminated mid-backup leaves the dump good and the worker running (the backup records no
// catalog and the drill compares rows, saying so), an index pg_dump skips is not recorded, and a
// server older than the catalog query records none. Through the API and a real worker.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { catalogSupported } from '../../src/domain/backups/capture/catalog-queries.ts';
import { noCatalog } from '../../src/domain/backups/drills/compare.ts';
import { withAdmin } from '../support/pg.ts';
import { roleName, useRestoreWorld, type Json } from './restore-world.ts';
import { query, waitFor } from './support.ts';

const w = useRestoreWorld({ [roleName('unused')]: '' });

// Locks a failed test left held, released after it: a backup left waiting on one would hold the
// worker's backup lane, and every later test would fail waiting for its own.
const held = new Set<() => Promise<void>>();
afterEach(async () => {
  for (const release of held) await release();
});

/** Holds an ACCESS EXCLUSIVE lock on `table` (pg_dump waits for it; the catalog read does not). */
async function holdLock(url: string, table: string): Promise<() => Promise<void>> {
  const c = new pg.Client({ connectionString: url });
  c.on('error', () => undefined);
  await c.connect();
  await c.query(`set idle_in_transaction_session_timeout = 0; begin; lock table ${table} in access exclusive mode`);
  const release = async () => {
    if (!held.delete(release)) return;
    await c.query('rollback');
    await c.end();
  };
  held.add(release);
  return release;
}

/**
 * The backup's catalog session once it is in `state` (and waiting for a lock, with `lock`). pg_dump's
 * session carries the same name and is itself idle in transaction between its own queries, so it
 * is found first (waiting for a table's lock, where it stays) and left out by its pid.
 */
const catalogSession = (dbname: string, dumpPid: number, state: string, lock = false) =>
  waitFor(
    `the catalog session ${state}`,
    async () =>
      (
        await withAdmin((c) =>
          c.query<{ pid: number }>(
            `select pid from pg_stat_activity where datname = $1 and application_name = 'cairn-backup' and state = $2
                and (wait_event_type = 'Lock') = $3 and pid <> $4`,
            [dbname, state, lock, dumpPid],
          ),
        )
      ).rows[0]?.pid,
    20_000,
  );

/** pg_dump's session (named as the backup's too) waiting for a table's lock. */
const pgDumpWaiting = (dbname: string) =>
  waitFor(
    'pg_dump waiting for a lock',
    async () =>
      (
        await withAdmin((c) =>
          c.query<{ pid: number }>(
            `select pid from pg_stat_activity where datname = $1 and application_name = 'cairn-backup'
                and wait_event_type = 'Lock' and query ilike 'LOCK TABLE%'`,
            [dbname],
          ),
        )
      ).rows[0]?.pid,
    20_000,
  );

const catalogRows = async (backupId: unknown) =>
  (
    await w
      .harness()
      .db('backup_catalogs')
      .where({ backup_id: String(backupId) })
      .count<{ n: string }[]>('* as n')
  )[0]!.n;

describe('the catalog session of a backup', () => {
  // A pg client's 'error' with no listener is thrown from its socket's callback: in a worker
  // process, the end of the process. Here vitest would catch it; the test fails on it instead.
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  beforeEach(() => {
    uncaught.length = 0;
    process.on('uncaughtException', onUncaught);
  });
  afterEach(() => {
    process.off('uncaughtException', onUncaught);
    expect(uncaught).toEqual([]);
  });

  it("outlives the database's idle_in_transaction_session_timeout while pg_dump runs", async () => {
    const source = await w.appDatabase(
      'create table blocker (a int); create table notes (id int); insert into notes values (1);',
    );
    await withAdmin((c) => c.query(`alter database ${source.name} set idle_in_transaction_session_timeout = '300ms'`));
    const from = await w.envOf(source.url);
    const release = await holdLock(source.url, 'blocker');
    const backup = w.backupOf(from);
    const pid = await catalogSession(source.name, await pgDumpWaiting(source.name), 'idle in transaction');
    // Idle in its transaction for three times the timeout, and still there.
    await waitFor(
      'the catalog session to stay idle in transaction past the timeout',
      async () =>
        (
          await withAdmin((c) =>
            c.query(
              `select 1 from pg_stat_activity where pid = $1 and state = 'idle in transaction'
                and clock_timestamp() - state_change > interval '900 ms'`,
              [pid],
            ),
          )
        ).rowCount,
    );
    await release();
    const done = await backup;
    expect(await catalogRows(done.id)).toBe('1');
    expect((await w.drill(from)).response).toEqual(expect.objectContaining({ verification: { result: 'passed' } }));
  });

  it('terminated while idle, leaves the dump good and the worker running', async () => {
    const source = await w.appDatabase(
      'create table blocker (a int); create table notes (id int); insert into notes values (1);',
    );
    const from = await w.envOf(source.url);
    const release = await holdLock(source.url, 'blocker');
    const backup = w.backupOf(from);
    const pid = await catalogSession(source.name, await pgDumpWaiting(source.name), 'idle in transaction');
    await withAdmin((c) => c.query('select pg_terminate_backend($1)', [pid]));
    await release();
    const done = await backup;
    // Read before it was lost: the record is whole.
    expect(await catalogRows(done.id)).toBe('1');
    expect((await w.drill(from)).response).toEqual(expect.objectContaining({ verification: { result: 'passed' } }));
  });

  it('terminated while reading, leaves the dump good, no catalog, and the drill comparing rows', async () => {
    // pg_get_expr opens the table with a default, so the read waits for its lock, as pg_dump does.
    const source = await w.appDatabase('create table slow (a int default 1); insert into slow values (1);');
    const from = await w.envOf(source.url);
    const release = await holdLock(source.url, 'slow');
    const backup = w.backupOf(from);
    // pg_dump too waits for the lock, its snapshot imported: the catalog session may go now.
    const pid = await catalogSession(source.name, await pgDumpWaiting(source.name), 'active', true);
    await withAdmin((c) => c.query('select pg_terminate_backend($1)', [pid]));
    await release();
    const done = await backup;
    expect(await catalogRows(done.id)).toBe('0');
    const drill = await w.drill(from);
    expect(drill.response).toEqual(expect.objectContaining({ verification: { result: 'passed', reason: noCatalog } }));
  });
});

describe('what the catalog records', () => {
  it('leaves out an index a failed CREATE INDEX CONCURRENTLY left invalid, as pg_dump does', async () => {
    const source = await w.appDatabase('create table t (a int); insert into t values (1), (1);');
    await expect(query(source.url, 'create unique index concurrently t_a on t (a)')).rejects.toThrow(
      /could not create unique index/,
    );
    const [invalid] = await query<{ n: number }>(
      source.url,
      'select count(*)::int as n from pg_index where not indisvalid',
    );
    expect(invalid!.n).toBe(1);
    const from = await w.envOf(source.url);
    await w.backupOf(from);
    const drill = (await w.drill(from)).response as Json;
    expect(drill).toEqual(expect.objectContaining({ verification: { result: 'passed' } }));
  });

  it('is read on PostgreSQL 12 and later only (attgenerated 12+, prokind 11+, pg_sequence 10+)', () => {
    expect(catalogSupported(90624)).toBe(false);
    expect(catalogSupported(110022)).toBe(false);
    expect(catalogSupported(120000)).toBe(true);
    expect(catalogSupported(150020)).toBe(true);
  });
});
