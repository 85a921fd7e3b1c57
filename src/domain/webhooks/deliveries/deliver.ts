// One attempt of one delivery (the `webhooks.deliver` job). At least once: the attempt is recorded
// only after its request ended, so a worker killed mid-request leaves the job to be run again, and
// the message goes out again with the same webhook-id and body (a receiver deduplicates on the id,
// the Standard Webhooks way). Recording checks the attempt's number, so a job that ran twice
// records once and queues its follow-up once.
import type { Knex } from 'knex';
import { keyringFromConfig, open, type Keyring } from '../../../crypto.ts';
import type { Config } from '../../../config.ts';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import type { Logger } from '../../../log.ts';
import { targetRule } from '../../../egress/target-rule.ts';
import { enqueueAttempts } from '../outbox/emit.ts';
import type { Ready } from '../outbox/queries.ts';
import {
  attemptContext,
  endpointFailed,
  endpointSucceeded,
  lockEndpoint,
  recordAttempt,
  releaseNext,
  type AttemptContext,
} from './queries.ts';
import { disableAfterMs, maxAttempts, retryDelaySeconds } from './schedule.ts';
import type { AttemptOutcome, Sender } from './send.ts';
import { signMessage } from '../endpoints/sign.ts';
import { laneQueue, moveQueued, settleLane, type LaneMove, type LaneQueue } from './lanes.ts';
import { secretContext } from '../endpoints/endpoints.ts';

/** An attempt that took longer than this, even a success, moves its endpoint to the slow lane. */
export const slowAttemptMs = 1000;

export interface DeliverDeps {
  config: Config;
  db: Knex;
  jobs: Jobs;
  log: Logger;
  sender: Sender;
}

/** The secrets an attempt signs with: the current one, and the previous one for 24 hours after a rotation. */
export function signingSecrets(keyring: Keyring, e: AttemptContext, now: Date): string[] {
  const secrets = [open(keyring, e.secret_sealed, secretContext(e.id)).toString()];
  if (e.previous_secret_sealed && e.previous_secret_expire_time && e.previous_secret_expire_time > now)
    secrets.push(open(keyring, e.previous_secret_sealed, secretContext(e.id)).toString());
  return secrets;
}

/** The queue a job was fetched from, and its id. */
export interface FetchedFrom {
  queue: LaneQueue;
  jobId: string;
}

/** One attempt; `from`, the job it came in (unknown: run wherever it is). */
export async function deliverAttempt(deps: DeliverDeps, job: Ready, from?: FetchedFrom): Promise<void> {
  const c = await attemptContext(deps.db, job.endpoint_id, job.message_id);
  // Gone (endpoint deleted, pruned), settled, or an attempt already recorded: nothing to send.
  if (!c || c.delivery_state !== 'pending' || c.attempt_count !== job.attempt - 1) return;
  // In the other lane than its endpoint's (queued while a lane move ran, or left by a worker
  // stopped before the move, or one the move failed: lanes.ts): queued in its lane instead, unsent.
  // Its new id is made from this job's, so a second run of this job queues it once, and never
  // matches a job of this attempt already finished in that lane (which would drop it).
  if (from && c.state !== 'disabled' && laneQueue(c.slow) !== from.queue)
    return enqueueAttempts(
      deps.db,
      deps.jobs,
      [{ ...job, env_id: c.env_id, slow: c.slow }],
      undefined,
      `/lane/${from.jobId}`,
    );
  const now = new Date();
  let outcome: AttemptOutcome;
  if (c.state === 'disabled') {
    outcome = { ok: false, durationMs: 0, error: 'the endpoint is disabled; not sent' };
  } else {
    const headers = signMessage(
      signingSecrets(keyringFromConfig(deps.config), c, now),
      c.message_id,
      Math.floor(now.getTime() / 1000),
      c.body,
    );
    outcome = await deps.sender.send(targetRule(deps.config, c.mode), c.url, { ...headers }, c.body);
  }
  await settle(deps, c, job.attempt, now, outcome);
}

async function settle(
  deps: DeliverDeps,
  c: AttemptContext,
  n: number,
  time: Date,
  outcome: AttemptOutcome,
): Promise<void> {
  const delay = outcome.ok || c.one_shot || c.state === 'disabled' ? undefined : retryDelaySeconds(n);
  const next = delay === undefined ? undefined : new Date(Date.now() + delay * 1000);
  const state = outcome.ok ? 'succeeded' : next ? 'pending' : 'failed';
  // The lane of the endpoint's next attempts (lanes.ts): slow after a failure or a slow answer, fast
  // after quick successes in a row. A disabled endpoint's unsent attempt says nothing about its receiver.
  const quick = outcome.ok && outcome.durationMs < slowAttemptMs;
  let move: LaneMove | undefined;
  await deps.db.transaction(async (trx) => {
    // An attempt that changes its endpoint's failure record or lane takes the endpoint's row before
    // its deliveries', the order a delete takes them in (endpoints/queries.ts removeEndpoint), so the two
    // never deadlock. The usual success of a healthy endpoint touches only deliveries: concurrent
    // attempts to one endpoint then settle side by side, not one after another.
    const touchesEndpoint = !quick || c.failing_since !== null || c.slow;
    const locked = touchesEndpoint ? await lockEndpoint(trx, c.id) : undefined;
    if (touchesEndpoint && !locked) return;
    const recorded = await recordAttempt(
      trx,
      {
        endpoint_id: c.id,
        message_id: c.message_id,
        number: n,
        time,
        status_code: outcome.statusCode ?? null,
        duration_ms: outcome.durationMs,
        error: outcome.error ?? null,
      },
      { state, next_attempt_time: next ?? null },
    );
    if (!recorded) return;
    const settled =
      locked && c.state !== 'disabled' ? await settleLane(trx, c.id, locked, quick) : { slow: (locked ?? c).slow };
    move = settled.move;
    const slow = settled.slow;
    const lane = { env_id: c.env_id, slow };
    if (outcome.ok) {
      if (touchesEndpoint) await endpointSucceeded(trx, c.id);
    } else if (c.state === 'enabled') {
      const disabled = await endpointFailed(
        trx,
        c.id,
        disableAfterMs,
        (since) =>
          `every attempt since ${since.toISOString()} failed (the last: ${outcome.error ?? `HTTP ${outcome.statusCode}`}); enable the endpoint again once its receiver works`,
      );
      if (disabled) deps.log.warn({ endpoint_id: c.id }, 'webhook endpoint disabled after failing for 5 days');
    }
    if (next)
      return enqueueAttempts(
        trx,
        deps.jobs,
        [{ endpoint_id: c.id, message_id: c.message_id, attempt: n + 1, ...lane }],
        next,
      );
    // Settled: the lane's next message may go (a redelivery never held it back).
    if (c.one_shot) return;
    const released = await releaseNext(trx, c.id, c.subject);
    if (released) await enqueueAttempts(trx, deps.jobs, [released]);
  });
  // After the commit, in batches: the attempt is recorded however long the backlog (lanes.ts).
  // A move that failed is not retried here (the attempt is recorded: this job, run again, does
  // nothing): its attempts go to their lane as workers fetch them.
  if (move)
    await moveQueued(deps.db, move).catch((err: unknown) =>
      deps.log.warn({ endpoint_id: c.id, err }, 'webhook attempts not moved to their lane; each moves when fetched'),
    );
  if (n >= maxAttempts && !outcome.ok)
    deps.log.info({ endpoint_id: c.id, message_id: c.message_id }, 'webhook delivery failed after its last attempt');
}
