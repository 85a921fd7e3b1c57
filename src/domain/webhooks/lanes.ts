// Which lane an endpoint's attempts wait in (emit.ts enqueueAttempts), and its queued attempts
// moved along when it changes lanes.
// - An attempt that fails, or answers after a second or more, moves its endpoint to the slow lane,
//   and the attempts it already has waiting in the fast lane go too: a receiver that went down
//   with a backlog queued would otherwise hold up to 4 fast-lane slots per timeout for its whole
//   backlog. What stays behind is what a worker already fetched (4 at most at once).
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
import type { Knex } from 'knex';
import type { AnyJobs as Jobs } from '../../jobs.ts';
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

/**
 * Records the attempt's effect on its endpoint's lane, on the settling transaction that holds the
 * endpoint's row (`lane` as read under that lock), and moves its queued attempts when the lane
 * changed. Answers whether the endpoint is now slow.
 */
export async function settleLane(
  trx: Knex.Transaction,
  jobs: Jobs,
  endpointId: string,
  lane: LaneState,
  quick: boolean,
): Promise<boolean> {
  const next = nextLane(lane, quick);
  if (next.slow === lane.slow && next.quick_successes === lane.quick_successes) return lane.slow;
  const q = laneQueries(trx);
  await q.setLane(endpointId, next);
  if (next.slow === lane.slow) return next.slow;
  const [from, to] = next.slow
    ? ['webhooks.deliver', 'webhooks.deliver-slow']
    : ['webhooks.deliver-slow', 'webhooks.deliver'];
  const taken = await q.takeQueued(endpointId, from!);
  // The groups of emit.ts enqueueAttempts: the endpoint in the fast lane, its environment in the slow one.
  const group = { id: next.slow ? lane.env_id : endpointId };
  await jobs.enqueueJobs(
    trx,
    to as 'webhooks.deliver',
    taken.map((j) => ({
      data: { endpoint_id: j.data.endpoint_id, message_id: j.data.message_id, attempt: j.data.attempt },
      id: j.id,
      group,
      startAfter: j.start_after,
    })),
  );
  return next.slow;
}
