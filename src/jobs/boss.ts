// pg-boss for one process role: the web inserts jobs, the worker works them and runs maintenance
// and cron, the release phase migrates pg-boss's schema and creates the queues (sync.ts).
import { PgBoss, type ConstructorOptions } from 'pg-boss';
import type { Config } from '../config.ts';
import { boundedPool } from '../db-timeouts.ts';

export type Role = 'web' | 'worker' | 'release';

/** pg-boss for one process role; only the release phase migrates its schema. */
export function createBoss(
  config: Pick<Config, 'DATABASE_URL'>,
  role: Role,
  options: Partial<ConstructorOptions> = {},
): PgBoss {
  const boss = new PgBoss({
    connectionString: config.DATABASE_URL,
    schema: 'pgboss',
    application_name: `cairn-${role}-boss`,
    // The role's statement bounds (db-timeouts.ts) on pg-boss's pool too: pg-boss passes its options
    // to pg.Pool (pg-boss src/db.ts), so a fetch or a job's transaction on a frozen connection fails
    // and the job is retried, instead of hanging the worker. pg-pool destroys a client whose query
    // failed; BoundedClient destroys one that timed out inside a transaction.
    ...(boundedPool(role) as Partial<ConstructorOptions>),
    connectionTimeoutMillis: 5000,
    // The process's share of its connection budget comes in `options.max` (db.ts connectionShares).
    max: role === 'worker' ? 2 : 1,
    migrate: role === 'release',
    createSchema: role === 'release',
    // Only workers run maintenance and cron; web processes only insert jobs.
    supervise: role === 'worker',
    // The supervisor's monitor fails jobs whose heartbeat stopped (a frozen or cut-off worker; a
    // killed one's are retried sooner, src/jobs/claims/) and retries them: every 10 s, not the 60 s default.
    // One worker claims each queue's pass for all of them, so more workers add no load.
    superviseIntervalSeconds: 10,
    monitorIntervalSeconds: 10,
    schedule: role === 'worker',
    // Workers wake on NOTIFY instead of sleeping out the 2 s default poll.
    useListenNotify: role === 'worker',
    ...options,
  });
  // pg-boss re-emits its pool's errors on itself, and an EventEmitter with no 'error' listener
  // throws them, killing the process. Postgres ending an idle connection emits one (a restart, or
  // a DROP DATABASE … WITH (FORCE) racing stop(): pg-pool's end() resolves before its clients have
  // closed, brianc/node-postgres#2328). Calls still reject on their own; the web and worker add a
  // listener that logs.
  boss.on('error', () => undefined);
  return boss;
}
