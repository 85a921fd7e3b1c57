// One backup or restore per environment at a time, across every worker: a session
// advisory lock, held for the whole job on a session kept beside the pools. The lock dies with the
// session, so a killed worker frees it at once, and a free lock on an environment whose row says
// `running` proves that run is an orphan (see reap.ts).
import pg from 'pg';

const lockSpace = 727306;

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
 * One lock session per process and database, open only while it holds a lock: a worker running a
 * backup and a restore holds one connection for both, not one each (the process's connection
 * budget counts one, db.ts). Session locks are reentrant in Postgres, so the process keeps its own
 * set of the environments it holds: a second run in this process is busy, as it is in any other.
 */
interface LockSession {
  client: pg.Client;
  ready: Promise<unknown>;
  held: Set<string>;
  closed: boolean;
}

const sessions = new Map<string, LockSession>();

function sessionFor(databaseUrl: string): LockSession {
  const existing = sessions.get(databaseUrl);
  if (existing && !existing.closed) return existing;
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'cairn-backup-lock' });
  const session: LockSession = { client, ready: client.connect(), held: new Set(), closed: false };
  // A lost session has lost its locks with it: the next lock opens a new one.
  const lost = () => {
    session.closed = true;
    if (sessions.get(databaseUrl) === session) sessions.delete(databaseUrl);
  };
  client.on('error', lost);
  client.on('end', lost);
  sessions.set(databaseUrl, session);
  return session;
}

/** Ends the session once it holds nothing (ending it is what frees its locks). */
async function closeIfIdle(databaseUrl: string, s: LockSession, force = false): Promise<void> {
  if ((s.held.size > 0 && !force) || s.closed) return;
  s.closed = true;
  if (sessions.get(databaseUrl) === s) sessions.delete(databaseUrl);
  await s.client.end().catch(() => undefined);
}

/** Takes the environment's lock without waiting; undefined when another run (here or elsewhere) holds it. */
export async function tryLockEnv(databaseUrl: string, envId: string): Promise<EnvLock | undefined> {
  const s = sessionFor(databaseUrl);
  if (s.held.has(envId)) return undefined;
  // Claimed before the first await: a concurrent call in this process sees it, and the session
  // stays open for it.
  s.held.add(envId);
  let ok: boolean;
  try {
    await s.ready;
    const res = await s.client.query<{ ok: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as ok', [
      lockSpace,
      envId,
    ]);
    ok = res.rows[0]?.ok === true;
  } catch (err) {
    // A session that cannot connect or query is no use to anyone: the next lock opens a new one.
    s.held.delete(envId);
    await closeIfIdle(databaseUrl, s, true);
    throw err;
  }
  if (!ok) {
    s.held.delete(envId);
    await closeIfIdle(databaseUrl, s);
    return undefined;
  }
  return {
    async release() {
      if (!s.held.delete(envId)) return;
      if (s.held.size === 0) await closeIfIdle(databaseUrl, s);
      else
        await s.client.query('select pg_advisory_unlock($1, hashtext($2))', [lockSpace, envId]).catch(() => undefined);
    },
  };
}

export async function withEnvLock<T>(databaseUrl: string, envId: string, fn: () => Promise<T>): Promise<T> {
  const lock = await tryLockEnv(databaseUrl, envId);
  if (!lock) throw new EnvBusyError(envId);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}
