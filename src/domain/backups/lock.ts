// One backup or restore per environment at a time, across every worker: a session
// advisory lock, held for the whole job on a connection of the worker's own pool. The lock dies with the
// session, so a killed worker frees it at once, and a free lock on an environment whose row says
// `running` proves that run is an orphan (see schedule/reap.ts).
import type { Knex } from 'knex';
import type pg from 'pg';
import { advisoryUnlock, tryAdvisoryLock } from './queries.ts';

export interface EnvLock {
  release(): Promise<void>;
}

export class EnvBusyError extends Error {
  constructor(envId: string) {
    super(`another backup or restore of ${envId} is running; this job will be retried`);
    this.name = 'EnvBusyError';
  }
}

/**
 * The lock session is one connection of the worker's knex pool, taken while the process holds any
 * environment lock and given back when it holds none: a worker running a backup and a restore
 * holds one connection for both, and none beside its budget (db.ts). Session locks are reentrant
 * in Postgres, so the process keeps its own set of the environments it holds: a second run in this
 * process is busy, as it is in any other. Every lock is unlocked before the connection goes back.
 */
interface LockSession {
  client: Promise<pg.Client>;
  held: Set<string>;
  /** Its connection went back to the pool (once). */
  released: boolean;
  /** Forgets the session when its connection fails (its locks went with it): the next lock takes a new one. */
  lost: () => void;
}

interface PoolClient {
  acquireConnection(): Promise<pg.Client>;
  releaseConnection(connection: pg.Client): Promise<unknown>;
  destroyRawConnection(connection: pg.Client): Promise<unknown>;
}

const sessions = new WeakMap<Knex, LockSession>();

function sessionFor(db: Knex): LockSession {
  const existing = sessions.get(db);
  if (existing) return existing;
  const session: LockSession = {
    client: (db.client as PoolClient).acquireConnection(),
    held: new Set(),
    released: false,
    lost: () => {
      if (sessions.get(db) === session) sessions.delete(db);
    },
  };
  void session.client.then((c) => c.on('error', session.lost), session.lost);
  sessions.set(db, session);
  return session;
}

/** Gives the connection back once it holds nothing; one that failed is closed, which frees its locks. */
async function closeIfIdle(db: Knex, s: LockSession, failed = false): Promise<void> {
  if ((s.held.size > 0 && !failed) || s.released) return;
  s.released = true;
  s.lost();
  const client = await s.client.catch(() => undefined);
  if (!client) return;
  client.off('error', s.lost);
  const pool = db.client as PoolClient;
  if (failed) await pool.destroyRawConnection(client).catch(() => undefined);
  await pool.releaseConnection(client).catch(() => undefined);
}

/** Takes the environment's lock without waiting; undefined when another run (here or elsewhere) holds it. */
export async function tryLockEnv(db: Knex, envId: string): Promise<EnvLock | undefined> {
  const s = sessionFor(db);
  if (s.held.has(envId)) return undefined;
  // Claimed before the first await: a concurrent call in this process sees it, and the session
  // stays open for it.
  s.held.add(envId);
  let ok: boolean;
  try {
    const client = await s.client;
    ok = await tryAdvisoryLock(client, envId);
  } catch (err) {
    s.held.delete(envId);
    await closeIfIdle(db, s, true);
    throw err;
  }
  if (!ok) {
    s.held.delete(envId);
    await closeIfIdle(db, s);
    return undefined;
  }
  return {
    async release() {
      if (!s.held.delete(envId)) return;
      const client = await s.client;
      const unlocked = await advisoryUnlock(client, envId).then(
        () => true,
        () => false,
      );
      await closeIfIdle(db, s, !unlocked);
    },
  };
}
