// A fetch's attempts (`webhooks.deliver` jobs), handled together: their contexts read in one
// statement, their requests sent at once, and the usual ones (a quick success of an endpoint that
// is enabled, fast and not failing: deliver.ts settlesAlone) recorded together on one transaction,
// one statement for the attempts and one for their lanes' next messages, and those queued in one
// insert. Every other attempt (a failure, a slow answer, an endpoint failing or in the slow lane)
// settles on its own (deliver.ts settleAttempt), as its endpoint's row and lane may change.
//
// Per delivery the usual attempt costs a share of its fetch's five statements instead of six of
// its own (bench/webhooks.ts; figures in docs/architecture/webhooks.md). The guarantees are an
// attempt's:
// - At least once: nothing is recorded before its request ended; a fetch whose record fails (a
//   database error) fails its jobs, which run again and send again with the same webhook-id.
// - Each attempt recorded once: a delivery takes attempt `n` only while it expects `n` (a job run
//   twice, or fetched twice in one batch, records once).
// - Order per lane: a lane's next message is released only after its head was recorded, in a later
//   statement of the same transaction (batch-queries.ts).
import { enqueueAttempts } from '../outbox/emit.ts';
import type { Ready } from '../outbox/queries.ts';
import { attemptContexts, recordSuccesses, releaseNextOfLanes, type Success } from './batch-queries.ts';
import { sendAttempt, settleAttempt, settlesAlone, slowAttemptMs, type DeliverDeps } from './deliver.ts';
import { slowLaneEnvLimit } from '../queues.ts';
import { admitSlow } from './lane-queries.ts';
import { laneQueue, type LaneQueue } from './lanes.ts';
import type { AttemptContext } from './queries.ts';
import type { AttemptOutcome } from './send.ts';

/** A fetched job: its id and the attempt it carries. */
export interface FetchedAttempt {
  id: string;
  data: Ready;
}

/** An attempt whose request went out (or, its endpoint disabled, was refused unsent). */
interface Sent {
  c: AttemptContext;
  n: number;
  time: Date;
  outcome: AttemptOutcome;
}

const key = (endpointId: string, messageId: string) => `${endpointId}/${messageId}`;

/**
 * Runs the attempts of one fetch from `queue`. Answers once each is recorded (or found to need
 * nothing); throws the first failure after the others were recorded.
 */
export async function deliverFetched(
  deps: DeliverDeps,
  queue: LaneQueue,
  jobs: readonly FetchedAttempt[],
): Promise<void> {
  const contexts = new Map(
    (
      await attemptContexts(
        deps.db,
        jobs.map((j) => j.data),
      )
    ).map((c) => [key(c.id, c.message_id), c]),
  );
  // Failures are kept (the first is thrown at the end), so none is an unhandled rejection meanwhile.
  const failures: unknown[] = [];
  const track = (p: Promise<void>) => p.catch((err: unknown) => void failures.push(err));
  const alone: Sent[] = [];
  const settles: Promise<void>[] = [];
  let flushed = false;
  const runs = jobs.map((job) =>
    track(
      attempt(deps, queue, job, contexts).then((s) => {
        if (!s) return;
        if (!flushed && settlesAlone(s.c, s.outcome)) alone.push(s);
        else settles.push(track(settleAttempt(deps, s.c, s.n, s.time, s.outcome)));
      }),
    ),
  );
  // A usual success answered within `slowAttemptMs`: once every request has ended or that long has
  // passed, each usual success is in, and they are recorded together without waiting for the
  // fetch's slowest attempt (up to the 15 s timeout). The others settle each as it ends.
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(runs), new Promise((resolve) => (timer = setTimeout(resolve, slowAttemptMs)))]);
  clearTimeout(timer);
  // One that ends after this (signing and the checks before its request took it past the second)
  // settles on its own.
  flushed = true;
  const together = track(settleTogether(deps, alone));
  await Promise.all(runs);
  await Promise.all([together, ...settles]);
  if (failures.length > 0) throw failures[0];
}

/** One job's attempt: sent, or nothing to send (gone, settled, recorded, or queued in its lane). */
async function attempt(
  deps: DeliverDeps,
  queue: LaneQueue,
  job: FetchedAttempt,
  contexts: ReadonlyMap<string, AttemptContext>,
): Promise<Sent | undefined> {
  const c = contexts.get(key(job.data.endpoint_id, job.data.message_id));
  // Gone (endpoint deleted, pruned), settled, or an attempt already recorded: nothing to send.
  if (!c || c.delivery_state !== 'pending' || c.attempt_count !== job.data.attempt - 1) return undefined;
  // In the other lane than its endpoint's (queued while a lane move ran, or left by a worker
  // stopped before the move, or one the move failed: lanes.ts): queued in its lane instead, unsent.
  // Its new id is made from this job's, so a second run of this job queues it once, and never
  // matches a job of this attempt already finished in that lane (which would drop it).
  if (c.state !== 'disabled' && laneQueue(c.slow) !== queue) {
    await enqueueAttempts(
      deps.db,
      deps.jobs,
      [{ ...job.data, env_id: c.env_id, slow: c.slow }],
      undefined,
      `/lane/${job.id}`,
    );
    return undefined;
  }
  // The slow lane's limit per environment, held exactly (lane-queries.ts admitSlow). pg-boss checks
  // a job group's limit per fetch, against the jobs active when that fetch began, so fetches at the
  // same moment could each take the last place (pg-boss #845: "overfetch is the same"), and one
  // tenant's dead receivers then held every fetch loop of a worker for their timeout. An attempt
  // admits itself before it sends: checks take turns per environment, the first is always admitted,
  // and one that finds the places taken is queued again, unsent, to come back once one ends.
  if (
    queue === 'webhooks.deliver-slow' &&
    c.state !== 'disabled' &&
    !(await admitSlow(deps.db, c.env_id, job.id, slowLaneEnvLimit))
  ) {
    // Its turn comes when one of those ends: queued again, unsent, under an id made from this job's.
    await enqueueAttempts(
      deps.db,
      deps.jobs,
      [{ ...job.data, env_id: c.env_id, slow: true }],
      new Date(Date.now() + waitTurnMs()),
      `/wait/${job.id}`,
    );
    return undefined;
  }
  const time = new Date();
  return { c, n: job.data.attempt, time, outcome: await sendAttempt(deps, c, time) };
}

/**
 * How long an attempt that found its environment's slow-lane places taken waits before it is
 * fetched again, at least: a random part keeps the ones deferred together from coming back together.
 */
const waitTurnMs = () => 1000 + Math.floor(Math.random() * 1000);

/**
 * Records the usual successes on one transaction, then releases their lanes' next messages and
 * queues those. A redelivery (one-shot) holds no lane, so releases nothing.
 */
async function settleTogether(deps: DeliverDeps, sent: readonly Sent[]): Promise<void> {
  if (sent.length === 0) return;
  // One record per attempt: the same attempt fetched twice (a sweep's or a lane move's job beside
  // the first) is recorded once, and sent once more at worst.
  const successes = new Map<string, Success>();
  for (const s of sent)
    successes.set(`${key(s.c.id, s.c.message_id)}/${s.n}`, {
      endpoint_id: s.c.id,
      message_id: s.c.message_id,
      subject: s.c.subject,
      seq: s.c.seq,
      number: s.n,
      time: s.time,
      status_code: s.outcome.statusCode ?? null,
      duration_ms: s.outcome.durationMs,
    });
  await deps.db.transaction(async (trx) => {
    const recorded = await recordSuccesses(trx, [...successes.values()]);
    const lanes = recorded.filter((r) => !r.one_shot);
    const released = await releaseNextOfLanes(trx, lanes);
    await enqueueAttempts(trx, deps.jobs, released);
  });
}
