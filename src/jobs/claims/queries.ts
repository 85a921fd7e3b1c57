// SQL for claim locks: how a worker shows Postgres that it is still working the jobs it claimed,
// and how another worker finds the claims whose worker is gone. pg-boss owns the job rows; these
// statements only read them and take advisory locks (transaction-scoped, so they go with the
// transaction that holds them: a commit, a rollback, or the connection closing when its process
// dies). The same rule as GoodJob's and Que's advisory-lock liveness.
import type { Db as BossDb } from 'pg-boss';
import type { Db } from '../../db.ts';

/** The advisory-lock space of job claims (src/domain/backups/queries.ts uses 727306). */
const claimLockSpace = 727307;

/**
 * Locks the jobs' claim keys for the rest of the transaction. Keys in a fixed order, so two
 * transactions whose ids happen to hash alike cannot wait on each other in a cycle.
 */
export async function lockClaims(tx: BossDb, ids: string[]): Promise<void> {
  await tx.executeSql(
    `select pg_advisory_xact_lock($1, k)
       from (select distinct hashtext(id) as k from unnest($2::text[]) as id order by 1) as keys`,
    [claimLockSpace, ids],
  );
}

export interface StaleClaim {
  id: string;
  name: string;
  retryCount: number;
}

export function claimQueries(db: Db) {
  return {
    /**
     * Jobs of these queues claimed more than `graceSeconds` ago and still active: candidates only,
     * since a live worker holds their locks (lockUnheld tells).
     */
    async activeSince(queues: string[], graceSeconds: number): Promise<StaleClaim[]> {
      const { rows } = await db.raw<{ rows: StaleClaim[] }>(
        `select id::text as id, name, retry_count as "retryCount" from pgboss.job
          where name = any(?) and state = 'active'
            and started_on < pgboss.job_now() - make_interval(secs => ?)`,
        [queues, graceSeconds],
      );
      return rows;
    },

    /**
     * Of these claims, those whose lock nobody holds, now locked by `db` (a transaction) until it
     * ends: no worker is working them, and none can start to before this transaction ends. Still
     * active under the same attempt, so a claim retried and taken again since the look is left.
     */
    async lockUnheld(claims: StaleClaim[]): Promise<StaleClaim[]> {
      const { rows } = await db.raw<{ rows: StaleClaim[] }>(
        `with wanted as materialized (
           select j.id, j.name, j.retry_count from pgboss.job j
             join unnest(?::uuid[], ?::int[]) as c(id, retry_count) using (id, retry_count)
            where j.state = 'active'
            order by hashtext(j.id::text)
         )
         select id::text as id, name, retry_count as "retryCount" from wanted
          where pg_try_advisory_xact_lock(?, hashtext(id::text))`,
        [claims.map((c) => c.id), claims.map((c) => c.retryCount), claimLockSpace],
      );
      if (rows.length === 0) return rows;
      // Read again, now that the locks are ours: the statement above read the jobs as they were
      // when it began (READ COMMITTED), so another reaper that failed them and let go of their
      // locks meanwhile left them looking active to it. A fresh statement sees that reaper's commit.
      const { rows: still } = await db.raw<{ rows: { id: string }[] }>(
        `select j.id::text as id from pgboss.job j
           join unnest(?::uuid[], ?::int[]) as c(id, retry_count) using (id, retry_count)
          where j.state = 'active'`,
        [rows.map((c) => c.id), rows.map((c) => c.retryCount)],
      );
      const active = new Set(still.map((r) => r.id));
      return rows.filter((r) => active.has(r.id));
    },

    /** Milliseconds until each of these jobs is due again (a retry waits out pg-boss's backoff). */
    async msUntilDue(ids: string[]): Promise<number[]> {
      const { rows } = await db.raw<{ rows: { ms: number }[] }>(
        `select greatest(0, extract(epoch from start_after - pgboss.job_now()) * 1000)::float8 as ms
           from pgboss.job where id = any(?::uuid[]) and state = 'retry'`,
        [ids],
      );
      return rows.map((r) => r.ms);
    },
  };
}
