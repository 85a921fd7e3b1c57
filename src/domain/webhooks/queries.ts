// SQL for webhooks (docs/conventions.md "Queries"). Every query is scoped by environment or by an endpoint found
// through one. A lane is an endpoint and a subject: its unsettled deliveries go one at a time, in
// seq order. Row locks keep a delivery from waiting behind one that settled meanwhile: a writer
// share-locks the lane's unsettled deliveries (in seq order) before it decides whether its own must
// wait, and the attempt that settles a lane's head updates that row before it releases the next,
// so each waits for the other's commit and then reads it. Row locks live in the rows, not in
// Postgres's shared lock table, which a burst of new groups would fill with one lock per lane.
import type { Db, SqlTx } from '../../db.ts';
import type { LaneState } from './lane-queries.ts';

export type EndpointState = 'enabled' | 'disabled';
export type DeliveryState = 'waiting' | 'pending' | 'succeeded' | 'failed';

export interface EndpointRow {
  id: string;
  env_id: string;
  url: string;
  event_types: string[];
  description: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expire_time: Date | null;
  state: EndpointState;
  disabled_reason: string | null;
  failing_since: Date | null;
  last_failure_time: Date | null;
  /** Its attempts wait in the slow lane (emit.ts enqueueAttempts). */
  slow: boolean;
  /** Attempts in a row answered 2xx within a second while slow (lanes.ts). */
  quick_successes: number;
  create_time: Date;
  update_time: Date;
}

export interface DeliveryRow {
  endpoint_id: string;
  message_id: string;
  event_type: string;
  subject: string;
  seq: string;
  state: DeliveryState;
  one_shot: boolean;
  attempt_count: number;
  next_attempt_time: Date | null;
  create_time: Date;
}

export interface AttemptRow {
  endpoint_id: string;
  message_id: string;
  number: number;
  time: Date;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

/** What one attempt needs: the delivery, its endpoint, its message and the environment's mode. */
export interface AttemptContext extends EndpointRow {
  message_id: string;
  subject: string;
  body: string;
  delivery_state: DeliveryState;
  one_shot: boolean;
  attempt_count: number;
  mode: 'test' | 'live';
}

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

/** The two lanes' queues (queues.ts). */
export const deliveryQueues = ['webhooks.deliver', 'webhooks.deliver-slow'];

const matching = `e.env_id = x.env_id and e.state = 'enabled' and (e.event_types @> array[x.type] or e.event_types @> array['*'])`;

/** The outbox, on the action's own transaction (`SqlTx`: a knex transaction through fromKnex, or a job's). */
export function outboxQueries(tx: SqlTx) {
  return {
    /**
     * The enabled endpoints that take each event (`n`: its index), key-share locked so that an
     * endpoint deleted meanwhile waits for this transaction instead of failing its insert.
     */
    async match(events: NewMessage[]): Promise<Match[]> {
      const { rows } = await tx.executeSql(
        `select x.n, e.id as endpoint_id
         from jsonb_to_recordset($1::jsonb) as x(n int, env_id text, type text)
         join webhook_endpoints e on ${matching}
         order by e.id
         for key share of e`,
        [JSON.stringify(events.map((e, n) => ({ ...e, n })))],
      );
      return rows as Match[];
    },

    /** Share-locks the unsettled deliveries of the lanes about to grow, in lane and seq order. */
    async lockLanes(lanes: { endpoint_id: string; subject: string }[]): Promise<void> {
      await tx.executeSql(
        `select 1 from webhook_deliveries d
         join (select distinct * from jsonb_to_recordset($1::jsonb) as l(endpoint_id text, subject text)) l
           using (endpoint_id, subject)
         where d.state in ('waiting', 'pending') and not d.one_shot
         order by d.endpoint_id, d.subject, d.seq
         for share of d`,
        [JSON.stringify(lanes)],
      );
    },

    /**
     * Writes the matched events' messages and a delivery per match. A delivery waits while an
     * earlier one in its lane is unsettled (or an earlier event of this call has the same
     * subject); the others are answered, ready for their first attempt.
     */
    async insert(events: NewMessage[], matches: Match[]): Promise<Queued[]> {
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
    },
  };
}

export function webhookQueries(db: Db) {
  const endpoints = () => db<EndpointRow>('webhook_endpoints');
  return {
    async insertEndpoint(
      row: Pick<EndpointRow, 'id' | 'env_id' | 'url' | 'event_types' | 'description' | 'secret_sealed'>,
    ): Promise<EndpointRow> {
      const [created] = await endpoints().insert(row).returning('*');
      return created!;
    },

    async endpoint(envId: string, id: string): Promise<EndpointRow | undefined> {
      return endpoints().where({ env_id: envId, id }).first();
    },

    async endpointForUpdate(envId: string, id: string): Promise<EndpointRow | undefined> {
      return endpoints().where({ env_id: envId, id }).forUpdate().first();
    },

    async countEndpoints(envId: string): Promise<number> {
      const row = await endpoints().where({ env_id: envId }).count<{ n: string }[]>('* as n').first();
      return Number(row?.n ?? 0);
    },

    /** Oldest first, after `after` (an id). */
    async listEndpoints(envId: string, after: string | undefined, limit: number): Promise<EndpointRow[]> {
      const q = endpoints().where({ env_id: envId }).orderBy('id').limit(limit);
      if (after) q.where('id', '>', after);
      return q;
    },

    async updateEndpoint(envId: string, id: string, patch: Partial<EndpointRow>): Promise<EndpointRow | undefined> {
      const [row] = await endpoints()
        .where({ env_id: envId, id })
        .update({ ...patch, update_time: db.fn.now() } as unknown as Partial<EndpointRow>)
        .returning('*');
      return row;
    },

    /**
     * Deletes an endpoint and, by cascade, its deliveries and attempts. Run in a transaction: the
     * endpoint's row, then its deliveries in seq order, are locked first, the order an attempt's
     * settling takes them in (deliver.ts), so a delete and a settle never deadlock.
     */
    async deleteEndpoint(envId: string, id: string): Promise<boolean> {
      const found = await endpoints().where({ env_id: envId, id }).forUpdate().first('id');
      if (!found) return false;
      await db.raw('select 1 from webhook_deliveries where endpoint_id = ? order by seq for update', [id]);
      return (await endpoints().where({ env_id: envId, id }).delete()) > 0;
    },

    /** Newest first, after `before` (a seq); the last 30 days, whenever the daily prune last ran. */
    async listDeliveries(endpointId: string, before: string | undefined, limit: number): Promise<DeliveryRow[]> {
      const q = db('webhook_deliveries as d')
        .join('webhook_messages as m', 'm.id', 'd.message_id')
        .where('d.endpoint_id', endpointId)
        .whereRaw("d.create_time > now() - interval '30 days'")
        .orderBy('d.seq', 'desc')
        .limit(limit)
        .select('d.*', 'm.event_type');
      if (before) q.where('d.seq', '<', before);
      return q;
    },

    /** One delivery of the last 30 days (an older one is pruned, whenever the prune runs). */
    async delivery(endpointId: string, messageId: string): Promise<DeliveryRow | undefined> {
      return db('webhook_deliveries as d')
        .join('webhook_messages as m', 'm.id', 'd.message_id')
        .where({ 'd.endpoint_id': endpointId, 'd.message_id': messageId })
        .whereRaw("d.create_time > now() - interval '30 days'")
        .first('d.*', 'm.event_type');
    },

    async attempts(endpointId: string, messageIds: string[]): Promise<AttemptRow[]> {
      if (messageIds.length === 0) return [];
      return db<AttemptRow>('webhook_attempts')
        .where('endpoint_id', endpointId)
        .whereIn('message_id', messageIds)
        .orderBy(['message_id', 'number']);
    },

    /**
     * A settled delivery made pending again for one more attempt, or undefined when it is not
     * settled (an attempt is still to come).
     */
    async redeliver(endpointId: string, messageId: string): Promise<number | undefined> {
      const [row] = await db('webhook_deliveries')
        .where({ endpoint_id: endpointId, message_id: messageId })
        .whereIn('state', ['succeeded', 'failed'])
        .update({ state: 'pending', one_shot: true, next_attempt_time: db.fn.now(), update_time: db.fn.now() })
        .returning('attempt_count');
      return row ? (row as { attempt_count: number }).attempt_count : undefined;
    },

    async attemptContext(endpointId: string, messageId: string): Promise<AttemptContext | undefined> {
      return db('webhook_deliveries as d')
        .join('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
        .join('webhook_messages as m', 'm.id', 'd.message_id')
        .join('envs as v', 'v.id', 'e.env_id')
        .where({ 'd.endpoint_id': endpointId, 'd.message_id': messageId })
        .first(
          'e.*',
          'd.message_id',
          'd.subject',
          'm.body',
          'd.state as delivery_state',
          'd.one_shot',
          'd.attempt_count',
          'v.mode',
        );
    },

    /**
     * The endpoint's row, for an attempt's settling that will change it (no key update: emitters'
     * key-share locks still pass), with its lane as the last commit left it; undefined when the
     * endpoint is gone.
     */
    async lockEndpoint(endpointId: string): Promise<LaneState | undefined> {
      return db('webhook_endpoints')
        .where({ id: endpointId })
        .forNoKeyUpdate()
        .first('env_id', 'slow', 'quick_successes');
    },

    /**
     * Settles attempt `n` of a delivery that still expects it; false when another run already
     * recorded it (a job that ran twice).
     */
    async recordAttempt(
      a: Omit<AttemptRow, 'time'> & { time: Date },
      next: { state: DeliveryState; next_attempt_time: Date | null },
    ): Promise<boolean> {
      const changed = await db('webhook_deliveries')
        .where({ endpoint_id: a.endpoint_id, message_id: a.message_id, attempt_count: a.number - 1, state: 'pending' })
        .update({ ...next, attempt_count: a.number, update_time: db.fn.now() });
      if (changed === 0) return false;
      await db('webhook_attempts').insert(a).onConflict(['endpoint_id', 'message_id', 'number']).ignore();
      return true;
    },

    /** After a success: the endpoint is not failing. */
    async endpointSucceeded(endpointId: string): Promise<void> {
      await db('webhook_endpoints')
        .where({ id: endpointId })
        .whereNotNull('failing_since')
        .update({ failing_since: null });
    },

    /**
     * After a failed attempt: the endpoint is failing since its first failure after a success,
     * and is disabled once that is `disableAfterMs` ago. A failure more than 12 hours after the
     * one before starts the count again: retries of a failing message come at most about 11 hours
     * apart (schedule.ts), so a longer gap means nothing was tried, and one failure after a quiet
     * week is not five days of failing. Answers whether it was disabled now.
     */
    async endpointFailed(
      endpointId: string,
      disableAfterMs: number,
      reason: (since: Date) => string,
    ): Promise<boolean> {
      const [row] = await db('webhook_endpoints')
        .where({ id: endpointId })
        .update({
          failing_since: db.raw(
            "case when failing_since is null or last_failure_time < now() - interval '12 hours' then now() else failing_since end",
          ),
          last_failure_time: db.fn.now(),
        })
        .returning(['failing_since', 'state']);
      const since = (row as { failing_since: Date; state: EndpointState } | undefined)?.failing_since;
      if (!since || (row as { state: EndpointState }).state !== 'enabled') return false;
      if (Date.now() - since.getTime() < disableAfterMs) return false;
      const disabled = await db('webhook_endpoints')
        .where({ id: endpointId, state: 'enabled' })
        .update({ state: 'disabled', disabled_reason: reason(since), update_time: db.fn.now() });
      return disabled > 0;
    },

    /** The next waiting delivery of a lane, made pending; undefined when none waits or one is still unsettled. */
    async releaseNext(endpointId: string, subject: string): Promise<Queued | undefined> {
      const { rows } = await db.raw<{
        rows: { message_id: string; attempt_count: number; env_id: string; slow: boolean }[];
      }>(
        `update webhook_deliveries d set state = 'pending', next_attempt_time = now(), update_time = now()
         from webhook_endpoints e
         where e.id = d.endpoint_id and (d.endpoint_id, d.message_id) = (
           select endpoint_id, message_id from webhook_deliveries
           where endpoint_id = ? and subject = ? and state in ('waiting', 'pending') and not one_shot
           order by seq limit 1
         ) and d.state = 'waiting'
         returning d.message_id, d.attempt_count, d.env_id, e.slow`,
        [endpointId, subject],
      );
      const row = rows[0];
      return row
        ? {
            endpoint_id: endpointId,
            message_id: row.message_id,
            attempt: row.attempt_count + 1,
            env_id: row.env_id,
            slow: row.slow,
          }
        : undefined;
    },

    /**
     * Pending deliveries whose attempt is long overdue: their job is gone (it ran out of pg-boss's
     * own retries while the database failed, say). Answered with the attempt each is owed.
     */
    async overdue(olderThan: Date, limit: number): Promise<Queued[]> {
      // Only when no job of the delivery is queued, retrying or running, in either lane: a backlog
      // that takes hours to drain is overdue too, and its jobs must not be doubled.
      const { rows } = await db.raw<{
        rows: { endpoint_id: string; message_id: string; attempt_count: number; env_id: string; slow: boolean }[];
      }>(
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
      return rows.map((r) => ({
        endpoint_id: r.endpoint_id,
        message_id: r.message_id,
        attempt: r.attempt_count + 1,
        env_id: r.env_id,
        slow: r.slow,
      }));
    },

    /** Lanes whose first unsettled delivery is waiting, since `olderThan`, behind nothing (its predecessor was pruned). */
    async stalledLanes(olderThan: Date, limit: number): Promise<{ endpoint_id: string; subject: string }[]> {
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
    },

    /** Deliveries (their attempts with them) and messages older than `before`, `limit` at a time. */
    async prune(before: Date, limit: number): Promise<number> {
      const deliveries = await db.raw(
        `delete from webhook_deliveries where ctid in (select ctid from webhook_deliveries where create_time < ? limit ?)`,
        [before, limit],
      );
      const messages = await db.raw(
        `delete from webhook_messages m where m.ctid in (
           select ctid from webhook_messages where create_time < ? limit ?
         ) and not exists (select 1 from webhook_deliveries d where d.message_id = m.id)`,
        [before, limit],
      );
      return (deliveries.rowCount ?? 0) + (messages.rowCount ?? 0);
    },
  };
}
