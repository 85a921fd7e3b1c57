// SQL for a fetch's attempts handled together (batch.ts): their contexts read in one statement, and
// the quick successes of healthy endpoints (the usual attempt) recorded in one statement and their
// lanes' next messages released in one more, on one transaction. The last two do for many rows
// what queries.ts recordAttempt and releaseNext do for one, under the same rules: an
// attempt is recorded only while its delivery still expects that number (a job run twice records
// once), and a lane's next message is released only after its head's update, in a later
// statement, so that it sees what an emitter that waited for the head's row lock committed
// (queries.ts: the lanes' row locks).
import type { Db } from '../../../db.ts';
import { queuedOf, type DueRow, type Queued, type Ready } from '../outbox/queries.ts';
import type { AttemptContext, AttemptRow } from './queries.ts';

/** attemptContexts' statement: ? the attempts' endpoint ids, ? their message ids. */
export const attemptContextsSql = `select e.*, d.message_id, d.subject, d.seq, m.body, d.state as delivery_state, d.one_shot, d.attempt_count, v.mode
       from (select distinct * from unnest(?::text[], ?::text[]) as k(endpoint_id, message_id)) k
       cross join lateral (
         select * from webhook_deliveries d where d.endpoint_id = k.endpoint_id and d.message_id = k.message_id offset 0
       ) d
       join webhook_endpoints e on e.id = d.endpoint_id
       join webhook_messages m on m.id = d.message_id
       join envs v on v.id = e.env_id`;

/**
 * Each attempt's context (AttemptContext), for those of these attempts that still have their delivery. Each
 * delivery is read by its primary key, in a subquery of its own (`offset 0` keeps Postgres from
 * merging it into the join): joined plainly, Postgres read the endpoint's deliveries by
 * (endpoint_id, seq) and filtered them by message, all of an endpoint's deliveries for each
 * attempt, whenever its statistics still took the table for small (one that grew in minutes).
 */
export async function attemptContexts(db: Db, attempts: readonly Ready[]): Promise<AttemptContext[]> {
  if (attempts.length === 0) return [];
  const { rows } = await db.raw<{ rows: AttemptContext[] }>(attemptContextsSql, [
    attempts.map((a) => a.endpoint_id),
    attempts.map((a) => a.message_id),
  ]);
  return rows;
}

/**
 * A quick success to record: attempt `number` of a delivery, and how its request went, with the
 * delivery's lane and place in it (its context's `subject` and `seq`, which never change).
 */
export type Success = Omit<AttemptRow, 'error'> & Pick<AttemptContext, 'subject' | 'seq'>;

/** A recorded success: its delivery's lane, and whether it was a redelivery (which holds no lane). */
export interface Recorded {
  endpoint_id: string;
  message_id: string;
  subject: string;
  one_shot: boolean;
}

/** recordSuccesses' statement: ? the successes, as JSON. */
export const recordSuccessesSql = `with x as (
       select * from jsonb_to_recordset(?::jsonb)
         as x(endpoint_id text, message_id text, subject text, seq bigint, number int, time timestamptz, status_code int,
           duration_ms int)
     ), locked as (
       select d.* from (select * from x order by endpoint_id, subject, seq) f
         cross join lateral (
           select d.endpoint_id, d.message_id, d.subject, d.seq from webhook_deliveries d
            where d.endpoint_id = f.endpoint_id and d.message_id = f.message_id and d.subject = f.subject
              and d.seq = f.seq and d.state = 'pending' and d.attempt_count = f.number - 1
              for no key update of d
         ) d
     ), rec as (
       update webhook_deliveries d
          set state = 'succeeded', next_attempt_time = null, attempt_count = x.number, update_time = now()
         from locked l, x
        where d.endpoint_id = l.endpoint_id and d.message_id = l.message_id and d.subject = l.subject and d.seq = l.seq
          and x.endpoint_id = l.endpoint_id and x.message_id = l.message_id
          and d.state = 'pending' and d.attempt_count = x.number - 1
       returning d.endpoint_id, d.message_id, d.subject, d.one_shot, x.number, x.time, x.status_code, x.duration_ms
     ), attempts as (
       insert into webhook_attempts (endpoint_id, message_id, number, time, status_code, duration_ms, error)
       select endpoint_id, message_id, number, time, status_code, duration_ms, null from rec
       on conflict (endpoint_id, message_id, number) do nothing
     )
     select endpoint_id, message_id, subject, one_shot from rec`;

/**
 * Records successes (each delivery `succeeded`, its attempt row written) of deliveries that still
 * expect them; answers those recorded. The deliveries' rows are locked in lane and seq order, the
 * order an emitter share-locks them in (outbox/queries.ts lockLanes), so a batch that holds
 * several lanes' heads never deadlocks with an emitter that waits for one of them.
 *
 * Each delivery is locked one at a time in lane and seq order (the subject and seq its context
 * read in this fetch: a nested loop takes its outer rows, sorted, in their order) and updated, by
 * a key every index of the table answers exactly. Joined plainly, Postgres read every pending
 * delivery of the table, or of the endpoint, whenever its statistics took the table for small:
 * in a backlog, the very time deliveries must be fast.
 */
export async function recordSuccesses(db: Db, successes: readonly Success[]): Promise<Recorded[]> {
  if (successes.length === 0) return [];
  const { rows } = await db.raw<{ rows: Recorded[] }>(recordSuccessesSql, [JSON.stringify(successes)]);
  return rows;
}

/**
 * Each lane's next waiting delivery made pending (releaseNext for several lanes); a lane whose
 * first unsettled delivery is still pending (its head, not yet settled) releases none.
 */
export async function releaseNextOfLanes(
  db: Db,
  lanes: readonly { endpoint_id: string; subject: string }[],
): Promise<Queued[]> {
  if (lanes.length === 0) return [];
  const { rows } = await db.raw<{ rows: DueRow[] }>(
    `update webhook_deliveries d set state = 'pending', next_attempt_time = now(), update_time = now()
       from webhook_endpoints e, (
         select n.endpoint_id, n.message_id
           from (select distinct * from unnest(?::text[], ?::text[]) as l(endpoint_id, subject)) l
           cross join lateral (
             select endpoint_id, message_id from webhook_deliveries
              where endpoint_id = l.endpoint_id and subject = l.subject and state in ('waiting', 'pending')
                and not one_shot
              order by seq limit 1
           ) n
       ) n
      where e.id = d.endpoint_id and d.endpoint_id = n.endpoint_id and d.message_id = n.message_id
        and d.state = 'waiting'
      returning d.endpoint_id, d.message_id, d.attempt_count, d.env_id, e.slow`,
    [lanes.map((l) => l.endpoint_id), lanes.map((l) => l.subject)],
  );
  return rows.map(queuedOf);
}
