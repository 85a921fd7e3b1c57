// One backup or restore per environment at a time, across every worker: a session
// advisory lock on a connection of its own, held for the whole job. The lock dies with the
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

/** Takes the environment's lock without waiting; undefined when another session holds it. */
export async function tryLockEnv(databaseUrl: string, envId: string): Promise<EnvLock | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'cairn-backup-lock' });
  await client.connect();
  // An idle lock connection must not be cut by a proxy or the server while a long dump runs.
  client.on('error', () => undefined);
  try {
    const res = await client.query<{ ok: boolean }>('select pg_try_advisory_lock($1, hashtext($2)) as ok', [
      lockSpace,
      envId,
    ]);
    if (!res.rows[0]?.ok) {
      await client.end();
      return undefined;
    }
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
  return {
    async release() {
      await client.end().catch(() => undefined);
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
