// Stores a batch of accepted events (worker steps 1-5). The batch comes from the inbox,
// claimed under a lease (see queries.ts `claim`); each event is processed on its own, and the
// processed batch is stored in one statement that also deletes the inbox rows it stored, which is
// what makes a re-run (a lease that ran out, a worker killed mid-batch) store nothing twice. An event
// whose processing throws is released for a later attempt; the rest of the batch is stored.
// Payloads arrive sealed and are opened one at a time, as each event's turn comes (sealed-payload.ts).
import type { Knex } from 'knex';
import { randomBase62, type Keyring } from '../../../crypto.ts';
import { newId } from '../../../ids.ts';
import { scrubbingQueries } from '../scrubbing/queries.ts';
import { processEvent, type ProcessedEvent } from '../pipeline/process.ts';
import { ingestQueries, type InboxRow, type NewEvent, type NewGroup } from './queries.ts';
import { compiledPolicy, type ScrubbingPolicy } from '../scrubbing/scrub.ts';
import { openPayload, UnopenablePayload } from './sealed-payload.ts';
import { minifiedSourceQueries, sourceMapQueries, type SourceMapRow } from '../source-maps/queries.ts';
import type { MapLoader } from '../pipeline/symbolicate.ts';

export interface IngestResult {
  stored: number;
  /** Events whose processing failed (released for another attempt, or buried after the last). */
  failed: { uid: string; error: unknown }[];
}

export interface IngestOptions {
  /** Attempts (claims) before an event moves to error_event_dead. */
  maxAttempts: number;
  /** Processed JSON held before a store: a batch of large events is stored in parts. */
  maxStoreBytes?: number;
}

export const ingestDefaults: IngestOptions = { maxAttempts: 10, maxStoreBytes: 4 * 1024 * 1024 };

export interface IngestDeps {
  db: Knex;
  /** Opens the sealed payloads (`keyringFromConfig(config)`). */
  keyring: Keyring;
  load: MapLoader;
}

/**
 * A processed event, kept as the JSON the store statement takes: the event's objects die as soon
 * as it is processed instead of living (and being promoted to the old generation) until the batch
 * is stored, which is most of what keeps a worker's heap small.
 */
interface Ready {
  env_id: string;
  event_time: string;
  group: Pick<ProcessedEvent, 'fingerprint' | 'title' | 'culprit' | 'grouping'> & { service_name: string };
  json: string;
}

type Failure = IngestResult['failed'][number] & { attempts: number };

/** Each map gets the minified file uploaded for its file in its release: the same `file`, else the same path. */
function withMinified(maps: Map<string, SourceMapRow[]>, minified: Map<string, SourceMapRow[]>): void {
  for (const [key, refs] of maps) {
    const files = minified.get(key);
    if (!files) continue;
    for (const ref of refs) {
      const m = files.find((f) => f.file === ref.file) ?? files.find((f) => f.file_path === ref.file_path);
      if (m) ref.minified = { sha256: m.sha256, object_key: m.object_key, size_bytes: m.size_bytes };
    }
  }
}

/** Processes the rows in order; `flush` is handed what is ready whenever it reaches `maxStoreBytes`, and at the end. */
async function processAll(
  { db, keyring, load }: IngestDeps,
  rows: InboxRow[],
  options: IngestOptions,
  flush: (ready: Ready[]) => Promise<void>,
): Promise<Failure[]> {
  const envIds = [...new Set(rows.map((r) => r.env_id))];
  const pairs = [...new Set(rows.filter((r) => r.release).map((r) => `${r.env_id}\n${r.release}`))].map((k) => {
    const [env_id, release] = k.split('\n') as [string, string];
    return { env_id, release };
  });
  const [policies, maps, minified] = await Promise.all([
    scrubbingQueries(db).policies(envIds),
    sourceMapQueries(db).forReleases(pairs),
    minifiedSourceQueries(db).forReleases(pairs),
  ]);
  withMinified(maps, minified);
  let ready: Ready[] = [];
  let bytes = 0;
  const failed: Failure[] = [];
  const maxAttempts = options.maxAttempts;
  for (const row of rows) {
    try {
      const policy = compiledPolicy(policies.get(row.env_id) as ScrubbingPolicy);
      const refs = row.release ? (maps.get(`${row.env_id}\n${row.release}`) ?? []) : [];
      // Opened now, not with the batch: a loop holds one event in plaintext, only while processing it.
      const processed = await processEvent(openPayload(keyring, row), refs, load, policy.scrubber());
      // The object store failed: try again later, while attempts remain, rather than store the
      // event unsymbolicated for good; the last attempt stores it with `map_unavailable` frames.
      if (
        row.attempts > 0 &&
        row.attempts < maxAttempts - 1 &&
        processed.frames.some((f) => f.unmapped_reason === 'map_unavailable')
      ) {
        throw new Error('a source map could not be read from the object store');
      }
      const b = processed.head;
      const event: NewEvent = {
        uid: row.uid,
        env_id: row.env_id,
        fingerprint: processed.fingerprint,
        event_time: b.event_time,
        receive_time: new Date(row.receive_time).toISOString(),
        release: b.release ?? '',
        service_name: b.service_name ?? '',
        body_deflated: processed.stored.toString('base64'),
      };
      const json = JSON.stringify(event);
      ready.push({
        env_id: row.env_id,
        event_time: b.event_time,
        json,
        group: {
          fingerprint: processed.fingerprint,
          title: processed.title,
          culprit: processed.culprit,
          grouping: processed.grouping,
          service_name: b.service_name ?? '',
        },
      });
      bytes += json.length;
    } catch (error) {
      // A payload that is not its row's will not open on any attempt: bury it now (its sealed value
      // stays for an operator) rather than retry it for ten minutes, or store it under this uid.
      const hopeless = error instanceof UnopenablePayload && error.permanent;
      failed.push({ uid: row.uid, attempts: hopeless ? Math.max(row.attempts, maxAttempts) : row.attempts, error });
    }
    if (bytes >= (options.maxStoreBytes ?? ingestDefaults.maxStoreBytes!)) {
      await flush(ready);
      ready = [];
      bytes = 0;
    }
  }
  if (ready.length > 0) await flush(ready);
  return failed;
}

/** The earliest occurrence of each group in the batch names a group that does not exist yet. */
function newGroups(ready: Ready[]): NewGroup[] {
  const groups = new Map<string, NewGroup & { first: string }>();
  for (const { env_id, event_time, group: g } of ready) {
    const k = `${env_id}/${g.fingerprint}`;
    const existing = groups.get(k);
    if (existing && existing.first <= event_time) continue;
    groups.set(k, { id: existing?.id ?? newId('eg'), env_id, ...g, etag: randomBase62(16), first: event_time });
  }
  return [...groups.values()].map(({ first: _first, ...g }) => g);
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 1000);

/** Processes and stores inbox rows (claimed by the caller); failures are released or buried. */
export async function ingestRows(
  deps: IngestDeps,
  rows: InboxRow[],
  options: IngestOptions = ingestDefaults,
): Promise<IngestResult> {
  if (rows.length === 0) return { stored: 0, failed: [] };
  const q = ingestQueries(deps.db);
  let stored = 0;
  const failed = await processAll(deps, rows, options, async (ready) => {
    stored += await q.store(`[${ready.map((r) => r.json).join(',')}]`, newGroups(ready));
  });
  await q.release(
    failed.map((f) => ({ uid: f.uid, attempts: f.attempts, error: message(f.error) })),
    options.maxAttempts,
  );
  return { stored, failed: failed.map(({ uid, error }) => ({ uid, error })) };
}

/** Claims one batch and ingests it; answers how many rows it claimed (0: the inbox is drained). */
export async function ingestNext(
  deps: IngestDeps,
  batchSize: number,
  leaseSeconds: number,
  options: IngestOptions = ingestDefaults,
): Promise<{ claimed: number } & IngestResult> {
  const q = ingestQueries(deps.db);
  const rows = await q.claim(batchSize, leaseSeconds);
  // A row claimed more often than allowed kept killing (or outliving) its worker: bury it unprocessed.
  const spent = rows.filter((r) => r.attempts > options.maxAttempts);
  if (spent.length > 0) {
    await q.release(
      spent.map((r) => ({
        uid: r.uid,
        attempts: r.attempts,
        error: 'gave up: the worker stopped during every attempt',
      })),
      options.maxAttempts,
    );
  }
  const result = await ingestRows(
    deps,
    rows.filter((r) => r.attempts <= options.maxAttempts),
    options,
  );
  return { claimed: rows.length, ...result };
}

/** Ingests the inbox rows of these uids, leased or not (tests; an operator's re-drive). */
export async function ingestBatch(
  deps: IngestDeps,
  uids: string[],
  options: IngestOptions = ingestDefaults,
): Promise<IngestResult> {
  return ingestRows(deps, await ingestQueries(deps.db).inbox(uids), options);
}
