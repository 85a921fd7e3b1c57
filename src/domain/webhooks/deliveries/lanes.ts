// Which lane an endpoint's attempts wait in (emit.ts enqueueAttempts), and its queued attempts
// moved along when it changes lanes (after the attempt that changed it is recorded: below).
// - An attempt that fails, or answers after a second or more, moves its endpoint to the slow lane,
//   and the attempts it already has waiting in the fast lane go too: a receiver that went down
//   with a backlog queued would otherwise hold up to 16 fast-lane slots per timeout for its whole
//   backlog. What stays behind is what a worker already fetched (16 at most at once).
// - An endpoint in the slow lane moves back after `quickSuccessesToFast` attempts in a row that
//   answer 2xx within a second, and its queued attempts go with it: a receiver that came back
//   then catches up at the fast lane's rate, not at the slow lane's one attempt per fetch and two
//   per environment (~2.5 attempts/s). Three in a row, not one, so that a receiver answering now
//   and then (a flapping one) stays in the slow lane instead of bringing its backlog into the fast
//   lane at each lucky answer.
// Only the head of each lane (an endpoint and a subject: queries.ts) ever has an attempt queued,
// so moving attempts between queues changes no order per resource; the moved job keeps its id
// (the attempt's, emit.ts attemptJobId) and its start time (a retry keeps its schedule), and the
// attempt's number still makes a second record nothing (deliver.ts).
//
// The lane changes on the attempt's settling transaction; the queued attempts move after it
// committed, in batches of `moveBatch`, each its own statement and transaction: an endpoint with a
// backlog of hundreds of thousands moved in the settle would take longer than a worker's statement
// bound (db-timeouts.ts), the settle would roll back and the attempt, never recorded, would be sent
// again at each retry. An attempt the move missed (queued by a concurrent emit, or the worker
// stopped between the settle and the move) is put in its lane when a worker runs it (deliver.ts).
import type { Knex } from 'knex';
import { laneQueries, type LaneState } from './lane-queries.ts';

export const quickSuccessesToFast = 3;

/** The endpoint's lane after an attempt that was quick (2xx within a second) or not. */
export function nextLane(
  lane: Pick<LaneState, 'slow' | 'quick_successes'>,
  quick: boolean,
): Pick<LaneState, 'slow' | 'quick_successes'> {
  if (!quick) return { slow: true, quick_successes: 0 };
  if (!lane.slow) return { slow: false, quick_successes: 0 };
  const n = lane.quick_successes + 1;
  return n >= quickSuccessesToFast ? { slow: false, quick_successes: 0 } : { slow: true, quick_successes: n };
}

/** What moves after a lane change: the endpoint's waiting attempts, from one queue to the other. */
export interface LaneMove {
  endpointId: string;
  from: LaneQueue;
  to: LaneQueue;
  /** The groups of emit.ts enqueueAttempts: the endpoint in the fast lane, its environment in the slow one. */
  group: string;
}

export type LaneQueue = 'webhooks.deliver' | 'webhooks.deliver-slow';

/**
 * Rows per move statement: 0.14 s each here (300,000 moved in 61 statements, 8.6 s, the slowest
 * 185 ms, with benchmarks running beside), far below a worker's 10 s bound.
 */
export const moveBatch = 5000;

export const laneQueue = (slow: boolean): LaneQueue => (slow ? 'webhooks.deliver-slow' : 'webhooks.deliver');

/**
 * Records the attempt's effect on its endpoint's lane, on the settling transaction that holds the
 * endpoint's row (`lane` as read under that lock). Answers whether the endpoint is now slow and,
 * when its lane changed, the move of its queued attempts, to run once the settle committed
 * (`moveQueued`).
 */
export async function settleLane(
  trx: Knex.Transaction,
  endpointId: string,
  lane: LaneState,
  quick: boolean,
): Promise<{ slow: boolean; move?: LaneMove }> {
  const next = nextLane(lane, quick);
  if (next.slow === lane.slow && next.quick_successes === lane.quick_successes) return { slow: lane.slow };
  await laneQueries(trx).setLane(endpointId, next);
  if (next.slow === lane.slow) return { slow: next.slow };
  const group = next.slow ? lane.env_id : endpointId;
  return { slow: next.slow, move: { endpointId, from: laneQueue(lane.slow), to: laneQueue(next.slow), group } };
}

/** Moves the endpoint's waiting attempts, `batch` at a time, each batch committed on its own. Answers how many moved. */
export async function moveQueued(db: Knex, move: LaneMove, batch = moveBatch): Promise<number> {
  const q = laneQueries(db);
  let total = 0;
  for (;;) {
    const n = await q.moveQueued(move.endpointId, move.from, move.to, move.group, batch);
    total += n;
    if (n < batch) return total;
  }
}
