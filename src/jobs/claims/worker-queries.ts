// SQL for worker liveness: how a worker that is not transactional shows Postgres it is still
// working the jobs it claimed, and how another worker finds the jobs of a worker that is gone.
// Each worker process holds a session advisory lock on its own random key for its whole life
// (src/jobs/claims/liveness.ts); a handler writes that key into its jobs' `output` as it starts them
// (pg-boss leaves an active job's output alone, and overwrites it when the job completes or
// fails), so a free key names a process whose connection closed: a killed or crashed worker.
import type pg from 'pg';
import type { Db } from '../../db.ts';

/** The advisory-lock space of worker keys (claims use 727307, backups/lock.ts 727306). */
export const workerLockSpace = 727308;

/** The field of a job's `output` that names its worker while it is active. */
const field = 'cairn_worker';

export interface WorkerClaim {
  id: string;
  name: string;
  retryCount: number;
}

/**
 * Holds the key for the life of `session`, the worker's own connection (waits while a reaper
 * looks at the key for a moment).
 */
export async function holdWorkerKey(session: pg.Client, key: number): Promise<void> {
  await session.query('select pg_advisory_lock($1, $2)', [workerLockSpace, key]);
}

export function workerQueries(db: Db) {
  return {
    /**
     * Names this worker on the jobs it has just claimed, each under the attempt it fetched (a job
     * failed and claimed by another worker meanwhile is left alone), found by key (name, id = any):
     * by the join alone, Postgres read the whole queue while its statistics took it for small.
     */
    async record(name: string, jobs: { id: string; retryCount: number }[], key: number): Promise<Set<string>> {
      const ids = jobs.map((j) => j.id);
      const { rows } = await db.raw<{ rows: { id: string }[] }>(
        `update pgboss.job j set output = jsonb_build_object('${field}', ?::int, 'attempt', j.retry_count)
           from unnest(?::uuid[], ?::int[]) as c(id, retry_count) where j.name = ? and j.id = any(?::uuid[])
            and j.id = c.id and j.retry_count = c.retry_count and j.state = 'active' returning j.id::text as id`,
        [key, ids, jobs.map((j) => j.retryCount), name, ids],
      );
      return new Set(rows.map((r) => r.id));
    },

    /** The keys of other workers that have active jobs of these queues under the attempt they named. */
    async activeKeys(queues: string[], own: number): Promise<number[]> {
      const { rows } = await db.raw<{ rows: { key: number }[] }>(
        `select distinct (output->>'${field}')::int as key from pgboss.job
          where name = any(?) and state = 'active' and output->>'${field}' is not null
            and (output->>'attempt')::int = retry_count and (output->>'${field}')::int <> ?`,
        [queues, own],
      );
      return rows.map((r) => r.key);
    },

    /**
     * When no session holds `key` (its worker is gone), locks it until `db` (a transaction) ends and
     * answers its jobs still active under the attempt it named; otherwise none. The jobs are read
     * after the lock is taken, so a reaper that failed them and let go meanwhile is seen.
     */
    async claimsOfGone(queues: string[], key: number): Promise<WorkerClaim[]> {
      const { rows: got } = await db.raw<{ rows: { ok: boolean }[] }>('select pg_try_advisory_xact_lock(?, ?) as ok', [
        workerLockSpace,
        key,
      ]);
      if (!got[0]?.ok) return [];
      const { rows } = await db.raw<{ rows: WorkerClaim[] }>(
        `select id::text as id, name, retry_count as "retryCount" from pgboss.job
          where name = any(?) and state = 'active' and (output->>'${field}')::int = ?
            and (output->>'attempt')::int = retry_count`,
        [queues, key],
      );
      return rows;
    },

    /**
     * Jobs of these queues active for over `graceSeconds` that no worker has named (for their
     * attempt), locked by `db` (a transaction) until it ends: their worker died between its fetch
     * and naming itself, since a live worker names its jobs within milliseconds of the fetch. A
     * worker that names a job after this only finds it gone (its update waits for these row
     * locks), and skips it.
     */
    async lockUnnamed(queues: string[], graceSeconds: number): Promise<WorkerClaim[]> {
      const { rows } = await db.raw<{ rows: WorkerClaim[] }>(
        `select id::text as id, name, retry_count as "retryCount" from pgboss.job
          where name = any(?) and state = 'active'
            and started_on < pgboss.job_now() - make_interval(secs => ?)
            and coalesce(output->>'${field}' is not null and (output->>'attempt')::int = retry_count, false) = false
          for update skip locked`,
        [queues, graceSeconds],
      );
      return rows;
    },

    /**
     * Makes these retries due now: the attempt did not fail, its worker died, so pg-boss's backoff
     * (meant for a handler's errors) would only hold the job back.
     */
    async dueNow(ids: string[]): Promise<void> {
      await db.raw(
        `update pgboss.job set start_after = pgboss.job_now() where id = any(?::uuid[]) and state = 'retry'`,
        [ids],
      );
    },
  };
}
