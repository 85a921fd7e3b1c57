// Accepting captures (docs/api.md "Error tracking"): each valid event gets its uid
// `err_<cell><ulid>` now, and the request's events are queued as `errors.ingest` jobs in one INSERT
// (shared with concurrent requests: writer.ts), which is the whole acceptance. An answered 202
// means the jobs are committed and will be stored; a failed request leaves nothing behind.
// Payloads are sealed here, before they leave the request: no job holds a captured secret in
// plaintext (sealed-payload.ts).
import type { Knex } from 'knex';
import type { z } from 'zod';
import { keyringFromConfig, type Keyring } from '../../../crypto.ts';
import type { Config } from '../../../config.ts';
import { newUlid } from '../../../ids.ts';
import { errorEventInput } from '../../../contract/error-capture.ts';
import { storableJson, type CapturedEvent } from './captured-event.ts';
import { AppError } from '../../../app-error.ts';
import { type AcceptedRow, intakeBacklog } from './queries.ts';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { intakeWriter } from './writer.ts';
import type { ErrorJobs as Jobs } from '../queues.ts';
import { sealPayloadJson } from './sealed-payload.ts';

export const newEventUid = (cell: string, now?: number): string => `err_${cell}${newUlid(now)}`;

export interface CaptureDeps {
  db: Knex;
  cell: string;
  /** The service key (`keyringFromConfig(config)`) that seals the payloads. */
  keyring: Keyring;
  jobs: Jobs;
}

/** What capture needs, from a web process's dependencies (every capture route: /v1 and Sentry's). */
export const captureDeps = (deps: {
  db: Knex;
  jobs: Jobs;
  config: Pick<Config, 'CAIRN_CELL' | 'CAIRN_ENCRYPTION_KEY_ID' | 'encryptionKeys'>;
}): CaptureDeps => ({
  db: deps.db,
  cell: deps.config.CAIRN_CELL,
  keyring: keyringFromConfig(deps.config),
  jobs: deps.jobs,
});

/**
 * Backpressure (docs/api.md): while an environment has more than `max_pending` events accepted and
 * not yet processed, captures are refused with 429 and Retry-After, and nothing is accepted. Each
 * web process reads the count at most once a second per environment, so the bound is soft by at
 * most a second of captures, and a capture pays for the read at most once a second.
 */
const backlogTtlMs = 1000;
const backlogs = new WeakMap<Knex, Map<string, { at: number; over: boolean; pending: number; max: number }>>();
/** The clock the once-a-second read goes by: a test moves it on a second rather than waiting one. */
export const backlogClock = { now: (): number => Date.now() };

async function refuseOverBacklog(db: Knex, envId: string, now = backlogClock.now()): Promise<void> {
  let seen = backlogs.get(db);
  if (!seen) backlogs.set(db, (seen = new Map()));
  let b = seen.get(envId);
  if (!b || now - b.at > backlogTtlMs) {
    const { pending, max_pending } = await intakeBacklog(db, envId);
    b = { at: now, over: pending >= max_pending, pending, max: max_pending };
    // Bounded: a process serving very many environments forgets them all at once, now and then.
    if (seen.size >= 10_000) seen.clear();
    seen.set(envId, b);
  }
  if (b.over)
    throw new AppError(
      'rate_limited',
      `this environment has ${b.pending} events waiting to be processed (max_pending ${b.max}); retry later, or raise max_pending in error_settings`,
      { retryAfter: 5, details: { pending: b.pending, max_pending: b.max } },
    );
}

/**
 * When a named event's id is claimed (docs/api.md "Idempotent capture"): `accept` claims it in
 * the acceptance's own transaction, so the answer can be the uid it was first accepted with
 * (capture answers uids); `store` leaves the claim to the worker's store (store-queries.ts
 * `storeEvents`), which keeps the first stored copy and drops the others. Sentry's routes answer
 * the SDK's own id whatever happens, so they claim on `store`, as relay leaves deduplication to
 * its pipeline: an envelope is then one INSERT instead of a transaction of four round trips
 * (~13% of its rate, bench/errors.ts).
 */
export type ClaimAt = 'accept' | 'store';

/** A valid event, sealed under its new uid, as the intake writes it. */
const sealedRow = (
  deps: CaptureDeps,
  envId: string,
  payload: CapturedEvent,
  claim: ClaimAt = 'accept',
): AcceptedRow => ({
  ...sealPayloadJson(deps.keyring, envId, newEventUid(deps.cell), payload.release ?? null, storableJson(payload)),
  event_id: claim === 'accept' ? (payload.event_id ?? null) : null,
});

async function write(deps: CaptureDeps, rows: AcceptedRow[]): Promise<string[]> {
  const accepted = await intakeWriter(deps.db, deps.jobs).write(rows);
  // A named event accepted before answers with its first uid (docs/api.md "Idempotent capture").
  return rows.map((r) => (r.event_id ? (accepted.get(`${r.env_id}\n${r.event_id}`) ?? r.uid) : r.uid));
}

/** Answers each event's uid: for a named event claimed on `accept`, the uid it was first accepted with. */
export async function acceptEvents(
  deps: CaptureDeps,
  envId: string,
  events: CapturedEvent[],
  claim: ClaimAt = 'accept',
): Promise<string[]> {
  if (events.length === 0) return [];
  await refuseOverBacklog(deps.db, envId);
  return write(
    deps,
    events.map((payload) => sealedRow(deps, envId, payload, claim)),
  );
}

export type BatchResult =
  | { uid: string }
  | { error: { code: 'invalid_request'; message: string; details: { fields: { field: string; message: string }[] } } };

function describe(issues: z.core.$ZodIssue[], index: number): BatchResult {
  const fields = issues
    .slice(0, 20)
    .map((i) => ({ field: ['error_events', String(index), ...i.path.map(String)].join('.'), message: i.message }));
  const summary = fields
    .slice(0, 5)
    .map((f) => `${f.field}: ${f.message}`)
    .join('; ');
  return { error: { code: 'invalid_request', message: `invalid event: ${summary}`, details: { fields } } };
}

/**
 * The event loop is given back after this much work on a batch, so that a 1000-event batch (up to
 * 20 MiB) never holds single captures and other requests for more than a few milliseconds.
 */
const sliceMs = 4;

/**
 * batchCapture: each item is checked on its own; only the bad ones fail, in place. `read` gives an
 * item's value (a split body's items are parsed here, one at a time: http/json-items.ts).
 */
export async function acceptBatch(
  deps: CaptureDeps,
  envId: string,
  items: readonly unknown[],
  read: (item: unknown) => unknown = (item) => item,
): Promise<BatchResult[]> {
  // Before any parsing: a refused batch costs the process nothing more.
  await refuseOverBacklog(deps.db, envId);
  const results: (BatchResult | number)[] = [];
  const rows: AcceptedRow[] = [];
  let slice = performance.now();
  for (let i = 0; i < items.length; i++) {
    const parsed = errorEventInput.safeParse(read(items[i]));
    if (parsed.success) {
      results.push(rows.length);
      rows.push(sealedRow(deps, envId, parsed.data));
    } else results.push(describe(parsed.error.issues, i));
    if (performance.now() - slice > sliceMs) {
      await yieldToEventLoop();
      slice = performance.now();
    }
  }
  const uids = rows.length > 0 ? await write(deps, rows) : [];
  return results.map((r) => (typeof r === 'number' ? { uid: uids[r]! } : r));
}
