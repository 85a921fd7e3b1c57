// One attempt of one delivery (a `webhooks.deliver` job; batch.ts runs a fetch's together): its
// signed request, and its record when it is not a usual success (batch.ts records those together).
// At least once: the attempt is recorded only after its request ended, so a worker killed
// mid-request leaves the job to be run again, and the message goes out again with the same
// webhook-id and body (a receiver deduplicates on the id, the Standard Webhooks way). Recording
// checks the attempt's number, so a job that ran twice records once and queues its follow-up once.
import type { Knex } from 'knex';
import { keyringFromConfig, open, type Keyring } from '../../../crypto.ts';
import type { Config } from '../../../config.ts';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import type { Logger } from '../../../log.ts';
import { targetRule } from '../../../egress/target-rule.ts';
import { enqueueAttempts } from '../outbox/emit.ts';
import {
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
import { moveQueued, settleLane, type LaneMove } from './lanes.ts';
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

/** One attempt's request, signed now with the endpoint's secrets; a disabled endpoint's is not sent. */
export async function sendAttempt(deps: DeliverDeps, c: AttemptContext, now: Date): Promise<AttemptOutcome> {
  if (c.state === 'disabled') return { ok: false, durationMs: 0, error: 'the endpoint is disabled; not sent' };
  const headers = signMessage(
    signingSecrets(keyringFromConfig(deps.config), c, now),
    c.message_id,
    Math.floor(now.getTime() / 1000),
    c.body,
  );
  return deps.sender.send(targetRule(deps.config, c.mode), c.url, { ...headers }, c.body);
}

/**
 * Whether an attempt settles with its delivery's rows alone: a success within a second of an
 * endpoint that is enabled, fast and not failing changes neither the endpoint's failure record nor
 * its lane (the usual attempt: batch.ts records those together). Read from the context, unlocked,
 * as `settleAttempt` decides whether to lock the endpoint.
 */
export function settlesAlone(c: AttemptContext, outcome: AttemptOutcome): boolean {
  const quick = outcome.ok && outcome.durationMs < slowAttemptMs;
  return quick && c.state === 'enabled' && c.failing_since === null && !c.slow;
}

/**
 * Records attempt `n` and its effects (the endpoint's failure record and lane, the next attempt or
 * the lane's next message), on its own transaction.
 */
export async function settleAttempt(
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
