// Stores a batch of accepted events (worker steps 1-5). The batch is a fetch of `errors.ingest`
// jobs (job.ts); each event is processed on its own and the processed batch is stored on the
// worker's transaction, which commits only with the jobs' settlement, so a re-run (a killed
// worker, a claim that ran out) stores nothing twice (store-queries.ts `storeEvents`). An event
// whose processing throws goes on alone: it is retried as a job of its own, and after its last
// attempt it is dead-lettered; the rest of its batch is stored. Payloads arrive sealed and are
// opened one at a time, as each event's turn comes (sealed-payload.ts).
import type { Knex } from 'knex';
import { randomBase62, type Keyring } from '../../../crypto.ts';
import { newId, ulidTime } from '../../../ids.ts';
import { scrubbingQueries } from '../scrubbing/queries.ts';
import { processEvent, type ProcessedEvent } from '../pipeline/process.ts';
import { readQueuedCauses } from '../sentry/causes.ts';
import { type ChangedGroup, type NewEvent, type NewGroup, storeEvents } from './store-queries.ts';
import { facetsOf } from '../pipeline/facets.ts';
import type { SqlTx } from '../../../db.ts';
import { openPayload, UnopenablePayload, type SealedPayloadRow } from './sealed-payload.ts';
import { minifiedSourceQueries, sourceMapQueries, type SourceMapRow } from '../source-maps/queries.ts';
import type { MapLoader, MapRef } from '../pipeline/symbolicate.ts';
import { filePath } from '../pipeline/paths.ts';
import { normalDebugId } from '../source-maps/debug-ids.ts';
import type { PipelineCaches } from '../pipeline/caches.ts';

/** An event of a fetched job, with what its job says of it. */
export interface JobEvent extends SealedPayloadRow {
  /** The job it came in. */
  job: string;
  receive_time: Date;
  /** This attempt of its job is its last: a failure now is dead-lettered. */
  lastAttempt: boolean;
}

/**
 * What happens to a failed event, decided by the worker (workers/errors-ingest.ts) on the same
 * transaction as the store: `retry` runs it again later, as a job of its own unless it is one
 * already; `bury` dead-letters it now (it can never succeed).
 */
export type Outcome = 'retry' | 'bury';

export interface Failure {
  event: JobEvent;
  outcome: Outcome;
  error: string;
}

export interface IngestResult {
  stored: number;
  failed: Failure[];
  /** Events of environments deleted since they were accepted: nothing is left to store them in. */
  dropped: number;
  /** Groups the store created or reopened, for their webhook events (groups/events.ts). */
  changed: ChangedGroup[];
  /** The groups whose per-minute counts the batch added to (IngestOptions `minuteEnvs`). */
  minuteGroups: string[];
}

export interface IngestOptions {
  /** Processed JSON held before a store: a batch of large events is stored in parts. */
  maxStoreBytes: number;
  /**
   * Environments whose groups keep per-minute counts (alert_group_minutes): those with an enabled
   * frequency rule (domain/alerts/fire/), counted in the store's own statement.
   */
  minuteEnvs?: readonly string[];
}

export const ingestDefaults: IngestOptions = { maxStoreBytes: 4 * 1024 * 1024 };

export interface IngestDeps {
  db: Knex;
  /** Opens the sealed payloads (`keyringFromConfig(config)`). */
  keyring: Keyring;
  load: MapLoader;
  /** The worker's own (createPipelineCaches): compiled policies, ready stacks, the stack encoder. */
  caches: PipelineCaches;
}

/**
 * A processed event, kept as the JSON the store statement takes: the event's objects die as soon
 * as it is processed instead of living (and being promoted to the old generation) until the batch
 * is stored, which is most of what keeps a worker's heap small.
 */
interface Ready {
  uid: string;
  env_id: string;
  receive_time: string;
  event_time: string;
  group: Pick<ProcessedEvent, 'fingerprint' | 'title' | 'culprit' | 'grouping'> & { service_name: string };
  json: string;
}

const message = (error: unknown): string => (error instanceof Error ? error.message : String(error)).slice(0, 1000);

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

const noMaps: MapRef[] = [];

/** A Sentry event's `debug_meta` images: minified file → debug id (sentry/event.ts). */
const debugIdsOf = (payload: object): Record<string, string> | undefined =>
  (payload as { sentry?: { debug_ids?: Record<string, string> } }).sentry?.debug_ids;

/**
 * The maps of an event's debug ids (docs/api.md "Symbolication"): each found in the environment
 * whatever its release, and named by the file the event says it served (so a frame of that URL
 * finds it first), ahead of the release's maps. Looked up once per batch per id; an event's list
 * is kept for the batch, so the stack cache sees the same list (and key) for events of one build.
 */
function debugIdMaps(db: Knex) {
  const found = new Map<string, SourceMapRow | null>();
  // Per release list (the same array for every event of an environment's release), then per ids.
  const lists = new WeakMap<MapRef[], Map<string, MapRef[]>>();
  return {
    async refs(envId: string, ids: Record<string, string> | undefined, release: MapRef[]): Promise<MapRef[]> {
      const files = Object.entries(ids ?? {});
      if (files.length === 0) return release;
      const listKey = `${envId}\n${JSON.stringify(files)}`;
      let forRelease = lists.get(release);
      if (!forRelease) lists.set(release, (forRelease = new Map()));
      const kept = forRelease.get(listKey);
      if (kept) return kept;
      const missing = [...new Set(files.map(([, id]) => normalDebugId(id)))].filter(
        (id) => !found.has(`${envId}\n${id}`),
      );
      if (missing.length > 0) {
        const rows = await sourceMapQueries(db).forDebugIds(envId, missing);
        for (const id of missing) found.set(`${envId}\n${id}`, rows.get(id) ?? null);
      }
      const refs: MapRef[] = [];
      for (const [file, id] of files) {
        const row = found.get(`${envId}\n${normalDebugId(id)}`);
        if (row)
          refs.push({
            file,
            file_path: filePath(file),
            sha256: row.sha256,
            size_bytes: row.size_bytes,
            object_key: row.object_key,
          });
      }
      const list = refs.length > 0 ? [...refs, ...release] : release;
      forRelease.set(listKey, list);
      return list;
    },
  };
}

/** The store's facet members of an event (NewEvent `tags`, `user_key`…). */
function facetsRow(
  head: ProcessedEvent['head'],
): Pick<NewEvent, 'tags' | 'user_key' | 'user_id' | 'email' | 'username'> {
  const { tags, user } = facetsOf(head);
  return { tags, ...user };
}

/** The event as the store takes it, and its group's candidate, from one processed job event. */
function readyOf(row: JobEvent, processed: ProcessedEvent, eventId: string | null): Ready {
  const b = processed.head;
  const event: NewEvent = {
    uid: row.uid,
    env_id: row.env_id,
    fingerprint: processed.fingerprint,
    event_time: b.event_time,
    // When it was accepted: its uid's moment (capture.ts), the same on every run of its job and
    // after a re-queue, so a re-run meets the stored event on the key (uid, receive_time).
    receive_time: new Date(ulidTime(row.uid.slice(6)) ?? row.receive_time).toISOString(),
    release: b.release ?? '',
    service_name: b.service_name ?? '',
    body_deflated: processed.stored.toString('base64'),
    event_id: eventId,
    // From the scrubbed event (its head), as the body is stored: no secret reaches a facet.
    ...facetsRow(processed.head),
  };
  const json = JSON.stringify(event);
  return {
    uid: event.uid,
    env_id: row.env_id,
    receive_time: event.receive_time,
    event_time: b.event_time,
    json,
    group: {
      fingerprint: processed.fingerprint,
      title: processed.title,
      culprit: processed.culprit,
      grouping: processed.grouping,
      service_name: b.service_name ?? '',
    },
  };
}

/** Processes the events in order; `flush` is handed what is ready whenever it reaches `maxStoreBytes`, and at the end. */
async function processAll(
  { db, keyring, load, caches }: IngestDeps,
  all: JobEvent[],
  options: IngestOptions,
  flush: (ready: Ready[]) => Promise<void>,
): Promise<{ failed: Failure[]; dropped: number }> {
  const envIds = [...new Set(all.map((r) => r.env_id))];
  const pairs = [...new Set(all.filter((r) => r.release).map((r) => `${r.env_id}\n${r.release}`))].map((k) => {
    const [env_id, release] = k.split('\n') as [string, string];
    return { env_id, release };
  });
  const [policies, maps, minified] = await Promise.all([
    scrubbingQueries(db).policies(envIds),
    sourceMapQueries(db).forReleases(pairs),
    minifiedSourceQueries(db).forReleases(pairs),
  ]);
  withMinified(maps, minified);
  const byDebugId = debugIdMaps(db);
  // Only existing environments have a policy: the events of one deleted since are dropped.
  const rows = all.filter((r) => policies.has(r.env_id));
  let ready: Ready[] = [];
  let bytes = 0;
  const failed: Failure[] = [];
  for (const row of rows) {
    try {
      const policy = caches.policies.get(policies.get(row.env_id)!);
      const releaseRefs = (row.release && maps.get(`${row.env_id}\n${row.release}`)) || noMaps;
      // Opened now, not with the batch: a loop holds one event in plaintext, only while processing it.
      const payload = readQueuedCauses(openPayload(keyring, row));
      const eventId = payload.event_id ?? null;
      const refs = await byDebugId.refs(row.env_id, debugIdsOf(payload), releaseRefs);
      const processed = await processEvent(payload, { maps: refs, load, policy, caches });
      // The object store failed: try again later, while attempts remain, rather than store the
      // event unsymbolicated for good; the last attempt stores it with `map_unavailable` frames.
      const unread = processed.mapUnavailable || processed.frames.some((f) => f.unmapped_reason === 'map_unavailable');
      if (!row.lastAttempt && unread) {
        throw new Error('a source map could not be read from the object store');
      }
      const next = readyOf(row, processed, eventId);
      ready.push(next);
      bytes += next.json.length;
    } catch (error) {
      // A payload that is not its event's will not open on any attempt: bury it now (its sealed
      // value stays for an operator) rather than retry it for ten minutes, or store it under this uid.
      const hopeless = error instanceof UnopenablePayload && error.permanent;
      failed.push({ event: row, outcome: hopeless ? 'bury' : 'retry', error: message(error) });
    }
    if (bytes >= options.maxStoreBytes) {
      await flush(ready);
      ready = [];
      bytes = 0;
    }
  }
  if (ready.length > 0) await flush(ready);
  return { failed, dropped: all.length - rows.length };
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

/**
 * Processes `events` and stores them on `tx` (the transaction their jobs are settled in); answers
 * what was stored, and the failures for the caller to settle on the same transaction.
 */
export async function ingestEvents(
  deps: IngestDeps,
  tx: SqlTx,
  events: JobEvent[],
  options: IngestOptions = ingestDefaults,
): Promise<IngestResult> {
  if (events.length === 0) return { stored: 0, failed: [], dropped: 0, changed: [], minuteGroups: [] };
  let stored = 0;
  const changed: ChangedGroup[] = [];
  const minuteGroups = new Set<string>();
  const { failed, dropped } = await processAll(deps, events, options, async (ready) => {
    const json = `[${ready.map((r) => r.json).join(',')}]`;
    const r = await storeEvents(deps.db, tx, json, newGroups(ready), options.minuteEnvs);
    stored += r.stored;
    changed.push(...r.changed);
    for (const id of r.minuteGroups) minuteGroups.add(id);
  });
  return { stored, failed, dropped, changed, minuteGroups: [...minuteGroups] };
}
