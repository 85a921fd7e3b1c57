// The worker's store step on the real Postgres: idempotent on the uid (a re-run stores nothing
// twice), occurrence_count equal to the stored events, and concurrent first events of a new group
// making exactly one group.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newEventUid } from '../../src/domain/observability/capture.ts';
import { errorEventInput } from '../../src/domain/observability/event-schema.ts';
import { ingestBatch } from '../../src/domain/observability/ingest.ts';
import { ingestQueries } from '../../src/domain/observability/queries.ts';
import type { MapLoader } from '../../src/domain/observability/symbolicate.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { sampleEvent } from './support.ts';

let h: Harness;
let env: CreatedEnv;
const noMaps: MapLoader = () => Promise.reject(new Error('no maps in this test'));

beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  await h?.close();
});

async function accept(n: number, patch: Record<string, unknown> = {}): Promise<string[]> {
  const rows = Array.from({ length: n }, () => ({ uid: newEventUid('c0'), env_id: env.env.id, payload: errorEventInput.parse(sampleEvent(patch)) }));
  await ingestQueries(h.db).insertInbox(rows);
  return rows.map((r) => r.uid);
}

const counts = async (fingerprintMessage: string) => {
  const groups = await h.db('error_groups').where({ env_id: env.env.id }).whereLike('title', `%${fingerprintMessage}%`).select('id', 'occurrence_count');
  const events = await h.db('error_events').whereIn('group_id', groups.map((g) => g.id)).count({ n: '*' }).first();
  return { groups: groups.length, occurrences: groups.reduce((a, g) => a + Number(g.occurrence_count), 0), events: Number(events?.n) };
};

describe('ingestBatch', () => {
  it('stores each event once, however often its job runs', async () => {
    const uids = await accept(5, { message: 'rerun' });
    expect((await ingestBatch(h.db, uids, noMaps)).stored).toBe(5);
    expect((await ingestBatch(h.db, uids, noMaps)).stored).toBe(0);
    // A run that finds the inbox row again (the worst case of at-least-once) still adds nothing.
    await h.db('error_event_inbox').insert({ uid: uids[0], env_id: env.env.id, payload: JSON.stringify(errorEventInput.parse(sampleEvent({ message: 'rerun' }))) });
    expect((await ingestBatch(h.db, uids, noMaps)).stored).toBe(0);
    expect(await counts('rerun')).toEqual({ groups: 1, occurrences: 5, events: 5 });
    expect(await h.db('error_event_inbox').whereIn('uid', uids).count({ n: '*' }).first()).toEqual({ n: '0' });
  });

  it('makes one group when many batches bring its first events at once', async () => {
    const batches = await Promise.all(Array.from({ length: 6 }, () => accept(20, { message: 'first at once', exception_type: 'RaceError' })));
    const results = await Promise.all(batches.map((uids) => ingestBatch(h.db, uids, noMaps)));
    expect(results.reduce((a, r) => a + r.stored, 0)).toBe(120);
    expect(await counts('first at once')).toEqual({ groups: 1, occurrences: 120, events: 120 });
  });

  it('counts right when the same batch runs twice at once', async () => {
    const uids = await accept(30, { message: 'double run', exception_type: 'DoubleError' });
    const [a, b] = await Promise.all([ingestBatch(h.db, uids, noMaps), ingestBatch(h.db, uids, noMaps)]);
    expect(a.stored + b.stored).toBe(30);
    expect(await counts('double run')).toEqual({ groups: 1, occurrences: 30, events: 30 });
  });
});
