// The worker's liveness session: one connection, opened at start and held for the process's life,
// that holds a session advisory lock on the process's own random key. Postgres frees the lock the
// moment the connection closes, which the kernel does when the process dies (kill -9, a crash, an
// OOM kill), so "the key is free" means "that worker is gone", at the cost of one connection per
// process rather than one per job (the rule of GoodJob's and Que's advisory-lock liveness).
// A frozen worker keeps its connection and its lock; pg-boss's heartbeat or expiry finds its jobs.
//
// When Postgres restarts (or the connection is cut), the lock goes with the session: the session
// reconnects every second and takes its key again. Until then another worker may take this one's
// jobs over while it still works them; every handler is safe run twice (src/jobs/queue.ts), and
// pg-boss fences this worker's late completion on the attempt it fetched.
import { randomInt } from 'node:crypto';
import pg from 'pg';
import type { Config } from '../../config.ts';
import type { Logger } from '../../log.ts';
import { holdWorkerKey } from './worker-queries.ts';

export interface Liveness {
  /** This process's key: what its handlers write on the jobs they start. */
  key: number;
  stop(): Promise<void>;
}

const reconnectMs = 1000;

/** Opens the session and takes the key; throws when Postgres cannot be reached at start. */
export async function startLiveness(config: Pick<Config, 'DATABASE_URL'>, log: Logger): Promise<Liveness> {
  // Random over the whole int4 range: two live workers share a key with odds of 1 in 2^32 per
  // pair, and then each merely looks alive while the other is.
  const key = randomInt(-(2 ** 31), 2 ** 31 - 1);
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const open = async (): Promise<void> => {
    const c = new pg.Client({
      connectionString: config.DATABASE_URL,
      application_name: 'cairn-worker-liveness',
      connectionTimeoutMillis: 5000,
      keepAlive: true,
    });
    c.on('error', () => undefined);
    c.on('end', () => {
      if (stopped || client !== c) return;
      client = undefined;
      log.warn('the worker liveness session closed; taking its key again');
      schedule();
    });
    await c.connect();
    try {
      await holdWorkerKey(c, key);
    } catch (err) {
      await c.end().catch(() => undefined);
      throw err;
    }
    if (stopped) await c.end().catch(() => undefined);
    else client = c;
  };

  const schedule = () => {
    retry = setTimeout(() => {
      retry = undefined;
      open().then(
        () => log.info('the worker liveness session holds its key again'),
        () => !stopped && schedule(),
      );
    }, reconnectMs);
    retry.unref();
  };

  await open();
  return {
    key,
    async stop() {
      stopped = true;
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}
