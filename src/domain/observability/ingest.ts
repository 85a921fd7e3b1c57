// Stores a batch of accepted events (issue 3, worker steps 1-5). Idempotent on the uid: the inbox
// row of an event is deleted in the same transaction that stores it, so a job that runs again
// finds nothing to do, and `insert … on conflict (uid) do nothing` covers two runs at once. Group
// counts are added only for events this transaction really stored, so `occurrence_count` always
// equals the stored events.
import type { Knex } from 'knex';
import { randomBase62 } from '../../crypto.ts';
import { newId } from '../../ids.ts';
import { scrubbingQueries } from './policy-queries.ts';
import { processEvent, type ProcessedEvent } from './process.ts';
import { ingestQueries, type GroupBump, type InboxRow, type NewEvent, type NewGroup } from './queries.ts';
import { createScrubber, type ScrubbingPolicy } from './scrub.ts';
import { sourceMapQueries } from './source-map-queries.ts';
import type { MapLoader } from './symbolicate.ts';

export interface IngestResult {
  stored: number;
  /** Uids whose processing failed (left in the inbox, for the job to retry). */
  failed: { uid: string; error: unknown }[];
}

interface Ready {
  row: InboxRow;
  processed: ProcessedEvent;
}

async function processAll(db: Knex, rows: InboxRow[], load: MapLoader): Promise<{ ready: Ready[]; failed: IngestResult['failed'] }> {
  const envIds = [...new Set(rows.map((r) => r.env_id))];
  const policies = await scrubbingQueries(db).policies(envIds);
  const pairs = [...new Set(rows.filter((r) => r.payload.release).map((r) => `${r.env_id}\n${r.payload.release}`))].map((k) => {
    const [env_id, release] = k.split('\n') as [string, string];
    return { env_id, release };
  });
  const maps = await sourceMapQueries(db).forReleases(pairs);
  const ready: Ready[] = [];
  const failed: IngestResult['failed'] = [];
  for (const row of rows) {
    try {
      const policy = policies.get(row.env_id) as ScrubbingPolicy;
      const refs = row.payload.release ? (maps.get(`${row.env_id}\n${row.payload.release}`) ?? []) : [];
      ready.push({ row, processed: await processEvent(row.payload, refs, load, createScrubber(policy)) });
    } catch (error) {
      failed.push({ uid: row.uid, error });
    }
  }
  return { ready, failed };
}

export async function ingestBatch(db: Knex, uids: string[], load: MapLoader): Promise<IngestResult> {
  const rows = await ingestQueries(db).inbox(uids);
  if (rows.length === 0) return { stored: 0, failed: [] };
  const { ready, failed } = await processAll(db, rows, load);
  if (ready.length === 0) return { stored: 0, failed };

  const groups = new Map<string, NewGroup>();
  for (const { row, processed: p } of ready) {
    const k = `${row.env_id}/${p.fingerprint}`;
    const existing = groups.get(k);
    if (existing && existing.first_seen_time <= p.body.event_time) continue;
    groups.set(k, {
      id: existing?.id ?? newId('eg'), env_id: row.env_id, fingerprint: p.fingerprint, title: p.title, culprit: p.culprit,
      service_name: p.body.service_name ?? '', etag: randomBase62(16), first_seen_time: p.body.event_time, grouping: p.grouping,
    });
  }

  const stored = await db.transaction(async (trx) => {
    const q = ingestQueries(trx);
    const ids = await q.upsertGroups([...groups.values()]);
    const events: NewEvent[] = ready.map(({ row, processed: p }) => ({
      uid: row.uid, env_id: row.env_id, group_id: ids.get(`${row.env_id}/${p.fingerprint}`)!,
      event_time: p.body.event_time, receive_time: new Date(row.receive_time).toISOString(),
      release: p.body.release ?? '', service_name: p.body.service_name ?? '', body: p.body,
    }));
    const inserted = await q.insertEvents(events);
    const bumps = new Map<string, GroupBump>();
    for (const e of events) {
      if (!inserted.has(e.uid)) continue;
      const b = bumps.get(e.group_id);
      if (!b) {
        bumps.set(e.group_id, { id: e.group_id, n: 1, first: e.event_time, last: e.event_time, last_release: e.release });
        continue;
      }
      b.n += 1;
      if (e.event_time < b.first) b.first = e.event_time;
      if (e.event_time >= b.last) {
        b.last = e.event_time;
        b.last_release = e.release;
      }
    }
    if (bumps.size > 0) await q.bumpGroups([...bumps.values()]);
    await q.deleteInbox(ready.map((r) => r.row.uid));
    return inserted.size;
  });
  return { stored, failed };
}
