// Writing events (docs/api.md "Webhooks", "Delivery"): never sent inside the request that caused
// them. The action writes its messages, their deliveries and the first attempts' jobs in its own
// transaction, so an event exists exactly when its action committed (a rollback takes it along)
// and is delivered by the workers even if every web process dies the moment after.
import { createHash } from 'node:crypto';
import type { Db as BossDb } from 'pg-boss';
import type { Db, SqlTx } from '../../../db.ts';
import { newId } from '../../../ids.ts';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import { messageBody, type EventType, type WebhookEvent } from './catalogue.ts';
import { anyEndpointTakes, insertMessages, lockLanes, matchEndpoints, type Queued, type Ready } from './queries.ts';

/**
 * The events' messages and deliveries on `tx`, the action's transaction. Costs one statement
 * when no enabled endpoint of the environment takes them (the usual case); else three, and the
 * jobs' insert.
 */
export async function emit(tx: SqlTx, jobs: Jobs, events: readonly WebhookEvent[]): Promise<void> {
  if (events.length === 0) return;
  const now = new Date();
  const messages = events.map((e) => ({
    id: newId('whmsg'),
    env_id: e.envId,
    type: e.type,
    subject: e.subject,
    body: messageBody(e, now),
  }));
  const matches = await matchEndpoints(tx, messages);
  if (matches.length === 0) return;
  await lockLanes(
    tx,
    matches.map((m) => ({ endpoint_id: m.endpoint_id, subject: messages[m.n]!.subject })),
  );
  await enqueueAttempts(tx, jobs, await insertMessages(tx, messages, matches));
}

/** Whether an enabled endpoint of these environments takes any of `types` (so building the data is worth it). */
export async function wanted(tx: SqlTx, envIds: readonly string[], types: readonly EventType[]): Promise<boolean> {
  return anyEndpointTakes(tx, envIds, types);
}

/**
 * The job of each attempt, in its endpoint's lane. Its id is derived from the delivery and the
 * attempt's number, so an attempt is queued once however often this runs.
 * - An endpoint that answers 2xx within a second (lanes.ts) is in the fast lane, `webhooks.deliver`: fetches
 *   of 16, its own group capping it at 16 attempts at once, so a receiver slower than that holds back
 *   only its own messages.
 * - Any other (new, failing, or slow to answer: deliver.ts) waits in `webhooks.deliver-slow`: one
 *   attempt per fetch, and its environment as the group, so however many endpoints a tenant points
 *   at receivers that never answer, they hold at most 2 attempts at once, and never a fast-lane
 *   fetch loop that other tenants' messages wait behind.
 */
export async function enqueueAttempts(
  db: Db | BossDb,
  jobs: Jobs,
  ready: readonly Queued[],
  startAfter?: Date,
  /** A new id for an attempt queued again by the sweep (its first job is gone): sweep.ts. */
  again?: string,
): Promise<void> {
  const job = (r: Queued, group: string) => ({
    data: { endpoint_id: r.endpoint_id, message_id: r.message_id, attempt: r.attempt },
    id: attemptJobId(r, again),
    group: { id: group },
    ...(startAfter ? { startAfter } : {}),
  });
  const fast = ready.filter((r) => !r.slow);
  const slow = ready.filter((r) => r.slow);
  if (fast.length > 0)
    await jobs.enqueueJobs(
      db,
      'webhooks.deliver',
      fast.map((r) => job(r, r.endpoint_id)),
    );
  if (slow.length > 0)
    await jobs.enqueueJobs(
      db,
      'webhooks.deliver-slow',
      slow.map((r) => job(r, r.env_id)),
    );
}

/** A UUID (pg-boss's id type) made from the attempt's identity. */
export function attemptJobId(r: Ready, again = ''): string {
  const h = createHash('sha256').update(`${r.endpoint_id}/${r.message_id}/${r.attempt}${again}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}
