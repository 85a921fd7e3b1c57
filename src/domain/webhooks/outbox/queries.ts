// SQL for the outbox: events written on the action's own transaction (`SqlTx`: a knex transaction
// through fromKnex, or a job's), and the sweep's reads of deliveries whose job is gone. Lanes and
// their row locks: deliveries/queries.ts.
import type { Db, SqlTx } from '../../../db.ts';

export interface NewMessage {
  id: string;
  env_id: string;
  type: string;
  subject: string;
  body: string;
}

/** An event (its index in the call) and an endpoint that takes it. */
export interface Match {
  n: number;
  endpoint_id: string;
}

/** A delivery whose next attempt is due: the job to send. */
export interface Ready {
  endpoint_id: string;
  message_id: string;
  attempt: number;
}

/** An attempt to queue, with what picks its lane: the endpoint's environment and whether it is slow. */
export interface Queued extends Ready {
  env_id: string;
  slow: boolean;
}

/** A delivery row as the statements that queue its next attempt return it. */
export interface DueRow {
  endpoint_id: string;
  message_id: string;
  attempt_count: number;
  env_id: string;
  slow: boolean;
}

/** The attempt a delivery is owed next: one past those it has had. */
export const queuedOf = (r: DueRow): Queued => ({
  endpoint_id: r.endpoint_id,
  message_id: r.message_id,
  attempt: r.attempt_count + 1,
  env_id: r.env_id,
  slow: r.slow,
});

/** The two lanes' queues (src/jobs.ts). */
export const deliveryQueues = ['webhooks.deliver', 'webhooks.deliver-slow'];

const matching = `e.env_id = x.env_id and e.state = 'enabled' and (e.event_types @> array[x.type] or e.event_types @> array['*'])`;

/**
 * The enabled endpoints that take each event (`n`: its index), key-share locked so that an
 * endpoint deleted meanwhile waits for this transaction instead of failing its insert.
 */
export async function matchEndpoints(tx: SqlTx, events: NewMessage[]): Promise<Match[]> {
  const { rows } = await tx.executeSql(
    `select x.n, e.id as endpoint_id
     from jsonb_to_recordset($1::jsonb) as x(n int, env_id text, type text)
     join webhook_endpoints e on ${matching}
     order by e.id
     for key share of e`,
    [JSON.stringify(events.map((e, n) => ({ ...e, n })))],
  );
  return rows as Match[];
}

/** Whether an enabled endpoint of these environments takes any of `types`. */
export async function anyEndpointTakes(
  tx: SqlTx,
  envIds: readonly string[],
  types: readonly string[],
): Promise<boolean> {
  const { rows } = await tx.executeSql(
    `select exists (select 1 from webhook_endpoints where env_id = any($1::text[]) and state = 'enabled'
       and (event_types && $2::text[] or event_types @> array['*'])) as yes`,
    [envIds, types],
  );
  return (rows as { yes: boolean }[])[0]?.yes === true;
}

/** Share-locks the unsettled deliveries of the lanes about to grow, in lane and seq order. */
export async function lockLanes(tx: SqlTx, lanes: { endpoint_id: string; subject: string }[]): Promise<void> {
  await tx.executeSql(
    `select 1 from webhook_deliveries d
     join (select distinct * from jsonb_to_recordset($1::jsonb) as l(endpoint_id text, subject text)) l
       using (endpoint_id, subject)
     where d.state in ('waiting', 'pending') and not d.one_shot
     order by d.endpoint_id, d.subject, d.seq
     for share of d`,
    [JSON.stringify(lanes)],
  );
}

/**
 * Writes the matched events' messages and a delivery per match. A delivery waits while an
 * earlier one in its lane is unsettled (or an earlier event of this call has the same
 * subject); the others are answered, ready for their first attempt.
 */
export async function insertMessages(tx: SqlTx, events: NewMessage[], matches: Match[]): Promise<Queued[]> {
  const { rows } = await tx.executeSql(
    `with x as (
       select * from jsonb_to_recordset($1::jsonb) as x(id text, env_id text, type text, subject text, body text, n int)
     ),
     t as (select * from jsonb_to_recordset($2::jsonb) as t(n int, endpoint_id text)),
     m as (
       insert into webhook_messages (id, env_id, event_type, subject, body)
       select x.id, x.env_id, x.type, x.subject, x.body from x
       where exists (select 1 from t where t.n = x.n)
       order by x.n
       returning id, seq, env_id, subject
     ),
     lane as (
       select t.endpoint_id, m.id as message_id, m.env_id, m.subject, m.seq,
         row_number() over (partition by t.endpoint_id, m.subject order by m.seq) as place
       from m join x on x.id = m.id join t on t.n = x.n
     ),
     d as (
       insert into webhook_deliveries (endpoint_id, message_id, env_id, subject, seq, state, next_attempt_time)
       select endpoint_id, message_id, env_id, subject, seq, state,
         case when state = 'pending' then now() end
       from (
         select l.*, case when l.place > 1 or exists (
           select 1 from webhook_deliveries p
           where p.endpoint_id = l.endpoint_id and p.subject = l.subject
             and p.state in ('waiting', 'pending') and not p.one_shot
         ) then 'waiting' else 'pending' end as state
         from lane l
       ) placed
       returning endpoint_id, message_id, env_id, state
     )
     select d.endpoint_id, d.message_id, d.env_id, e.slow
     from d join webhook_endpoints e on e.id = d.endpoint_id where d.state = 'pending'`,
    // `n`: the events' order, which their seq keeps.
    [JSON.stringify(events.map((e, n) => ({ ...e, n }))), JSON.stringify(matches)],
  );
  return (rows as Omit<Queued, 'attempt'>[]).map((r) => ({ ...r, attempt: 1 }));
}

/**
 * Pending deliveries whose attempt is long overdue: their job is gone (it ran out of pg-boss's
 * own retries while the database failed, say). Answered with the attempt each is owed.
 */
export async function overdueDeliveries(db: Db, olderThan: Date, limit: number): Promise<Queued[]> {
  // Only when no job of the delivery is queued, retrying or running, in either lane: a backlog
  // that takes hours to drain is overdue too, and its jobs must not be doubled.
  const { rows } = await db.raw<{ rows: DueRow[] }>(
    `select d.endpoint_id, d.message_id, d.attempt_count, d.env_id, e.slow
     from webhook_deliveries d join webhook_endpoints e on e.id = d.endpoint_id
     where d.state = 'pending' and d.next_attempt_time < ?
       and (d.endpoint_id, d.message_id) not in (
         select data->>'endpoint_id', data->>'message_id' from pgboss.job
         where name = any(?) and state in ('created', 'retry', 'active')
       )
     order by d.next_attempt_time limit ?`,
    [olderThan, deliveryQueues, limit],
  );
  return rows.map(queuedOf);
}

/** Lanes whose first unsettled delivery is waiting, since `olderThan`, behind nothing (its predecessor was pruned). */
export async function stalledLanes(
  db: Db,
  olderThan: Date,
  limit: number,
): Promise<{ endpoint_id: string; subject: string }[]> {
  const { rows } = await db.raw<{ rows: { endpoint_id: string; subject: string }[] }>(
    `select distinct d.endpoint_id, d.subject from webhook_deliveries d
     where d.state = 'waiting' and d.create_time < ?
       and not exists (
         select 1 from webhook_deliveries p
         where p.endpoint_id = d.endpoint_id and p.subject = d.subject and p.seq < d.seq
           and p.state in ('waiting', 'pending') and not p.one_shot
       )
     limit ?`,
    [olderThan, limit],
  );
  return rows;
}
