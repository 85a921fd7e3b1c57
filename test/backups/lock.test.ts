// The environment locks of backups and restores (src/domain/backups/lock.ts): one run per
// environment across every process, all of a process's locks on one connection of its pool, and
// none held once they are released.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { tryLockEnv } from '../../src/domain/backups/lock.ts';
import { createHarness, sqlNumber, type Harness } from '../support/harness.ts';

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

/**
 * The sessions holding this file's environment locks: in this file's database only, since pg_locks
 * shows every database's, and other test files hold environment locks of their own meanwhile.
 */
const lockSessions = () =>
  sqlNumber(
    h.db,
    `select count(distinct pid) from pg_locks
      where locktype = 'advisory' and classid = 727306 and granted
        and database = (select oid from pg_database where datname = current_database())`,
  );

describe('environment locks', () => {
  it('hold many environments on one session, refuse a second run of one, and close the session when released', async () => {
    const a = await tryLockEnv(h.db, 'env_a');
    const b = await tryLockEnv(h.db, 'env_b');
    try {
      expect(a).toBeDefined();
      expect(b).toBeDefined();
      // Postgres would grant the same session the lock again; the process must not.
      expect(await tryLockEnv(h.db, 'env_a')).toBeUndefined();
      expect(await lockSessions()).toBe(1);
      await a!.release();
      const again = await tryLockEnv(h.db, 'env_a');
      expect(again).toBeDefined();
      await again!.release();
    } finally {
      // Released on failure too: a held lock keeps its pooled connection, and the pool's close waits for it.
      await b?.release();
    }
    expect(await lockSessions()).toBe(0);
  });

  it('are taken by one process at a time, and freed for others when released or when the holder dies', async () => {
    const other = new pg.Client({ connectionString: h.config.DATABASE_URL });
    await other.connect();
    try {
      const mine = await tryLockEnv(h.db, 'env_c');
      const take = async () =>
        (await other.query<{ ok: boolean }>("select pg_try_advisory_lock(727306, hashtext('env_c')) as ok")).rows[0]!
          .ok;
      expect(await take()).toBe(false);
      await mine!.release();
      expect(await take()).toBe(true);
      // Now the other process holds it: this one is refused until that session ends.
      expect(await tryLockEnv(h.db, 'env_c')).toBeUndefined();
    } finally {
      await other.end();
    }
    const after = await tryLockEnv(h.db, 'env_c');
    expect(after).toBeDefined();
    await after!.release();
  });
});
