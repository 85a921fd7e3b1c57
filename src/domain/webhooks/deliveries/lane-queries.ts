// SQL for moving an endpoint between the delivery lanes (lanes.ts): its lane, on the settling
// transaction that holds the endpoint's row (queries.ts lockEndpoint), and its queued attempts,
// after that transaction committed.
import type { Knex } from 'knex';
import type { Db } from '../../../db.ts';

/** An endpoint's lane, as an attempt's settling reads it under the endpoint's row lock. */
export interface LaneState {
  env_id: string;
  slow: boolean;
  quick_successes: number;
}

export function laneQueries(db: Db) {
  return {
    /** Moves the endpoint's next attempts to the slow lane or back (the caller holds its row). */
    async setLane(endpointId: string, lane: Pick<LaneState, 'slow' | 'quick_successes'>): Promise<void> {
      await db('webhook_endpoints').where({ id: endpointId }).update(lane);
    },

    /**
     * Moves up to `limit` of the endpoint's attempts that wait in `from` (pg-boss's `created` and
     * `retry`: fetched ones are `active`) to `to`, in one statement on the server: each keeps its
     * id (the attempt's, emit.ts attemptJobId), its start time and retry count, its place in line
     * (`created_on`); it takes the new lane's group, dead letter and policy. Answers how many moved.
     *
     * A worker's fetch locks the rows it takes (FOR UPDATE SKIP LOCKED) and marks them active; the
     * move skips rows a fetch holds and a fetch skips rows the move holds, so no attempt runs in both
     * lanes. An id already waiting in `to` is not queued twice. `not blocked` and `state < 'active'`
     * match pg-boss's index of waiting jobs (job_i11): only the queue's waiting rows are read, not its
     * 3 days of finished ones. No pg-boss index has a waiting job's group or payload, so the rows are
     * the queue's waiting ones filtered by endpoint (the endpoint's own when it is the head of a few
     * resources, which is the usual case). Nothing moves once the endpoint has left the lane of `to`
     * (it changed lanes again meanwhile): two moves the opposite ways never pass rows back and forth.
     */
    async moveQueued(endpointId: string, from: string, to: string, group: string, limit: number): Promise<number> {
      const { rows } = await db.raw<{ rows: { moved: number }[] }>(
        `with taken as (
           select id from pgboss.job
            where name = :from and state < 'active' and not blocked and data->>'endpoint_id' = :endpointId
              and exists (select 1 from webhook_endpoints e where e.id = :endpointId and e.slow = :toSlow)
            limit :limit for update skip locked
         ), d as (
           delete from pgboss.job j using taken t where j.name = :from and j.id = t.id returning j.*
         ), moved as (
         insert into pgboss.job (id, name, data, priority, state, retry_limit, retry_count, retry_delay,
                 retry_backoff, retry_delay_max, expire_seconds, deletion_seconds, singleton_key, singleton_on,
                 group_id, group_tier, start_after, created_on, keep_until, dead_letter, policy,
                 heartbeat_seconds, blocked, blocking, pending_dependencies)
         select d.id, :to, d.data, d.priority, d.state, d.retry_limit, d.retry_count, d.retry_delay,
                d.retry_backoff, d.retry_delay_max, d.expire_seconds, d.deletion_seconds, d.singleton_key,
                d.singleton_on, :group, d.group_tier, d.start_after, d.created_on, d.keep_until, q.dead_letter,
                q.policy, d.heartbeat_seconds, d.blocked, d.blocking, d.pending_dependencies
           from d, pgboss.queue q where q.name = :to
         on conflict do nothing
         )
         select count(*)::int as moved from d`,
        { from, to, endpointId, group, limit, toSlow: to === 'webhooks.deliver-slow' },
      );
      // Rows taken, not rows inserted: a duplicate dropped is a row moved all the same.
      return rows[0]?.moved ?? 0;
    },
  };
}

/** The advisory lock space of the slow lane's admissions (one key per environment). */
const admissionLockSpace = 727309;

/**
 * Admits the slow-lane job `jobId` to send when fewer than `limit` other admitted jobs of its
 * environment are still active (a job run again keeps its admission); answers whether it was.
 * Checks of one environment take turns under a transaction's advisory lock, and the count is read
 * in a statement after the lock was granted, so it sees every admission committed before: the
 * first to check is admitted, and no more than `limit` ever are. Admissions whose job is no longer
 * active are deleted on the way.
 */
export async function admitSlow(db: Knex, envId: string, jobId: string, limit: number): Promise<boolean> {
  return db.transaction(async (trx) => {
    await trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [admissionLockSpace, envId]);
    const { rows } = await trx.raw<{ rows: { admitted: boolean }[] }>(
      `with held as (
         select a.job_id, (j.id is not null) as active
           from webhook_slow_admissions a
           left join pgboss.job j on j.name = 'webhooks.deliver-slow' and j.id = a.job_id and j.state = 'active'
          where a.env_id = :envId
       ), gone as (
         delete from webhook_slow_admissions a using held h where a.job_id = h.job_id and not h.active
       ), others as (
         select count(*)::int as n from held where active and job_id <> :jobId::uuid
       ), admit as (
         insert into webhook_slow_admissions (job_id, env_id)
         select :jobId::uuid, :envId from others where n < :limit
         on conflict (job_id) do nothing
       )
       select n < :limit as admitted from others`,
      { envId, jobId, limit },
    );
    return rows[0]?.admitted ?? false;
  });
}

/** Admissions whose job is no longer active (the daily prune; an environment's next check deletes its own). */
export async function pruneSlowAdmissions(db: Db): Promise<number> {
  const { rowCount } = await db.raw<{ rowCount: number }>(
    `delete from webhook_slow_admissions a
      where not exists (select 1 from pgboss.job j
                         where j.name = 'webhooks.deliver-slow' and j.id = a.job_id and j.state = 'active')`,
  );
  return rowCount ?? 0;
}
