// SQL for deliveries and their attempts. A lane is an endpoint and a subject: its unsettled
// deliveries go one at a time, in seq order. Row locks keep a delivery from waiting behind one that
// settled meanwhile: a writer share-locks the lane's unsettled deliveries (in seq order) before it
// decides whether its own must wait (outbox/queries.ts), and the attempt that settles a lane's head
// updates that row before it releases the next, so each waits for the other's commit and then
// reads it. Row locks live in the rows, not in Postgres's shared lock table, which a burst of new
// groups would fill with one lock per lane.
import type { Db } from '../../../db.ts';
import type { EndpointRow, EndpointState } from '../endpoints/queries.ts';
import type { Queued } from '../outbox/queries.ts';
import type { LaneState } from './lane-queries.ts';

export type DeliveryState = 'waiting' | 'pending' | 'succeeded' | 'failed';

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
  /** The delivery's place in its lane (bigint, as text). */
  seq: string;
  body: string;
  delivery_state: DeliveryState;
  one_shot: boolean;
  attempt_count: number;
  mode: 'test' | 'live';
}

/** Newest first, after `before` (a seq); the last 30 days, whenever the daily prune last ran. */
export async function listDeliveries(
  db: Db,
  endpointId: string,
  before: string | undefined,
  limit: number,
): Promise<DeliveryRow[]> {
  const q = db('webhook_deliveries as d')
    .join('webhook_messages as m', 'm.id', 'd.message_id')
    .where('d.endpoint_id', endpointId)
    .whereRaw("d.create_time > now() - interval '30 days'")
    .orderBy('d.seq', 'desc')
    .limit(limit)
    .select('d.*', 'm.event_type');
  if (before) q.where('d.seq', '<', before);
  return q;
}

/** One delivery of the last 30 days (an older one is pruned, whenever the prune runs). */
export async function findDelivery(db: Db, endpointId: string, messageId: string): Promise<DeliveryRow | undefined> {
  return db('webhook_deliveries as d')
    .join('webhook_messages as m', 'm.id', 'd.message_id')
    .where({ 'd.endpoint_id': endpointId, 'd.message_id': messageId })
    .whereRaw("d.create_time > now() - interval '30 days'")
    .first('d.*', 'm.event_type');
}

export async function listAttempts(db: Db, endpointId: string, messageIds: string[]): Promise<AttemptRow[]> {
  if (messageIds.length === 0) return [];
  return db<AttemptRow>('webhook_attempts')
    .where('endpoint_id', endpointId)
    .whereIn('message_id', messageIds)
    .orderBy(['message_id', 'number']);
}

/**
 * A settled delivery made pending again for one more attempt, or undefined when it is not
 * settled (an attempt is still to come).
 */
export async function markRedelivery(db: Db, endpointId: string, messageId: string): Promise<number | undefined> {
  const [row] = await db('webhook_deliveries')
    .where({ endpoint_id: endpointId, message_id: messageId })
    .whereIn('state', ['succeeded', 'failed'])
    .update({ state: 'pending', one_shot: true, next_attempt_time: db.fn.now(), update_time: db.fn.now() })
    .returning('attempt_count');
  return row ? (row as { attempt_count: number }).attempt_count : undefined;
}

/**
 * The endpoint's row, for an attempt's settling that will change it (no key update: emitters'
 * key-share locks still pass), with its lane as the last commit left it; undefined when the
 * endpoint is gone.
 */
export async function lockEndpoint(db: Db, endpointId: string): Promise<LaneState | undefined> {
  return db('webhook_endpoints').where({ id: endpointId }).forNoKeyUpdate().first('env_id', 'slow', 'quick_successes');
}

/**
 * Settles attempt `n` of a delivery that still expects it; false when another run already
 * recorded it (a job that ran twice).
 */
export async function recordAttempt(
  db: Db,
  a: Omit<AttemptRow, 'time'> & { time: Date },
  next: { state: DeliveryState; next_attempt_time: Date | null },
): Promise<boolean> {
  const changed = await db('webhook_deliveries')
    .where({ endpoint_id: a.endpoint_id, message_id: a.message_id, attempt_count: a.number - 1, state: 'pending' })
    .update({ ...next, attempt_count: a.number, update_time: db.fn.now() });
  if (changed === 0) return false;
  await db('webhook_attempts').insert(a).onConflict(['endpoint_id', 'message_id', 'number']).ignore();
  return true;
}

/** After a success: the endpoint is not failing. */
export async function endpointSucceeded(db: Db, endpointId: string): Promise<void> {
  await db('webhook_endpoints').where({ id: endpointId }).whereNotNull('failing_since').update({ failing_since: null });
}

/**
 * After a failed attempt: the endpoint is failing since its first failure after a success,
 * and is disabled once that is `disableAfterMs` ago. A failure more than 12 hours after the
 * one before starts the count again: retries of a failing message come at most about 11 hours
 * apart (schedule.ts), so a longer gap means nothing was tried, and one failure after a quiet
 * week is not five days of failing. Answers whether it was disabled now.
 */
export async function endpointFailed(
  db: Db,
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
}

/** The next waiting delivery of a lane, made pending; undefined when none waits or one is still unsettled. */
export async function releaseNext(db: Db, endpointId: string, subject: string): Promise<Queued | undefined> {
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
}

/** Deliveries (their attempts with them) and messages older than `before`, `limit` at a time. */
export async function pruneDeliveries(db: Db, before: Date, limit: number): Promise<number> {
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
}
