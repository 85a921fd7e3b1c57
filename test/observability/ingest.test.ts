// The worker's claim and store steps on the real Postgres: idempotent on the uid (a re-run stores
// nothing twice), occurrence_count equal to the stored events, concurrent first events of a new
// group making exactly one group, leases that run out, retries and dead letters, and the byte
// budgets that keep a batch of large events as small in memory as an ordinary one. (A worker
// process killed mid-batch: crash.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyringFromConfig } from '../../src/crypto.ts';
import { newEventUid } from '../../src/domain/observability/intake/capture.ts';
import { errorEventInput, type ErrorEventInput } from '../../src/domain/observability/intake/event-schema.ts';
import { unpackBody } from '../../src/domain/observability/pipeline/event-body.ts';
import { ingestBatch, ingestNext, type IngestDeps } from '../../src/domain/observability/intake/ingest.ts';
import { ingestQueries } from '../../src/domain/observability/intake/queries.ts';
import { sealPayload } from '../../src/domain/observability/intake/sealed-payload.ts';
import type { MapLoader } from '../../src/domain/observability/pipeline/symbolicate.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { sampleEvent } from './support.ts';

let h: Harness;
let env: CreatedEnv;
let deps: IngestDeps;
const noMaps: MapLoader = () => Promise.reject(new Error('no maps in this test'));

beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
  deps = { db: h.db, keyring: keyringFromConfig(h.config), load: noMaps };
});
afterAll(async () => {
  await h?.close();
});

/** An inbox row as capture writes it, sealed; `payload` may be one the API would refuse. */
const sealed = (payload: unknown, uid = newEventUid('c0')) =>
  sealPayload(deps.keyring, env.env.id, uid, payload as ErrorEventInput);

async function accept(n: number, patch: Record<string, unknown> = {}): Promise<string[]> {
  const rows = Array.from({ length: n }, () => sealed(errorEventInput.parse(sampleEvent(patch))));
  await ingestQueries(h.db).insertInbox(rows);
  return rows.map((r) => r.uid);
}

const counts = async (fingerprintMessage: string) => {
  const groups = await h
    .db('error_groups')
    .where({ env_id: env.env.id })
    .whereLike('title', `%${fingerprintMessage}%`)
    .select('id', 'occurrence_count');
  const events = await h
    .db('error_events')
    .whereIn(
      'group_id',
      groups.map((g) => g.id),
    )
    .count({ n: '*' })
    .first();
  return {
    groups: groups.length,
    occurrences: groups.reduce((a, g) => a + Number(g.occurrence_count), 0),
    events: Number(events?.n),
  };
};

describe('ingestBatch', () => {
  it('stores each event once, however often its job runs', async () => {
    const uids = await accept(5, { message: 'rerun' });
    expect((await ingestBatch(deps, uids)).stored).toBe(5);
    expect((await ingestBatch(deps, uids)).stored).toBe(0);
    // A run that finds the inbox row again (the worst case of at-least-once) still adds nothing.
    await h.db('error_event_inbox').insert(sealed(errorEventInput.parse(sampleEvent({ message: 'rerun' })), uids[0]));
    expect((await ingestBatch(deps, uids)).stored).toBe(0);
    expect(await counts('rerun')).toEqual({ groups: 1, occurrences: 5, events: 5 });
    expect(await h.db('error_event_inbox').whereIn('uid', uids).count({ n: '*' }).first()).toEqual({ n: '0' });
  });

  it('makes one group when many batches bring its first events at once', async () => {
    const batches = await Promise.all(
      Array.from({ length: 6 }, () => accept(20, { message: 'first at once', exception_type: 'RaceError' })),
    );
    const results = await Promise.all(batches.map((uids) => ingestBatch(deps, uids)));
    expect(results.reduce((a, r) => a + r.stored, 0)).toBe(120);
    expect(await counts('first at once')).toEqual({ groups: 1, occurrences: 120, events: 120 });
  });

  it('counts right when the same batch runs twice at once', async () => {
    const uids = await accept(30, { message: 'double run', exception_type: 'DoubleError' });
    const [a, b] = await Promise.all([ingestBatch(deps, uids), ingestBatch(deps, uids)]);
    expect(a.stored + b.stored).toBe(30);
    expect(await counts('double run')).toEqual({ groups: 1, occurrences: 30, events: 30 });
  });

  it('hands each claimable row to one claimer, and a row again once its lease runs out', async () => {
    const uids = await accept(40, { message: 'leases', exception_type: 'LeaseError' });
    const q = ingestQueries(h.db);
    const [a, b] = await Promise.all([q.claim(1000, 30), q.claim(1000, 30)]);
    const mine = [...a, ...b].filter((r) => uids.includes(r.uid));
    expect(mine.map((r) => r.uid).sort()).toEqual([...uids].sort());
    expect((await q.claim(1000, 30)).filter((r) => uids.includes(r.uid))).toEqual([]);
    // The lease runs out (driven here, not waited for): the rows are claimable again, attempt 2.
    await h
      .db('error_event_inbox')
      .whereIn('uid', uids)
      .update({ lease_until: h.db.raw("now() - interval '1 second'") });
    const again = (await q.claim(1000, 30)).filter((r) => uids.includes(r.uid));
    expect(again.map((r) => r.attempts)).toEqual(uids.map(() => 2));
    expect((await ingestBatch(deps, uids)).stored).toBe(40);
    expect(await counts('leases')).toEqual({ groups: 1, occurrences: 40, events: 40 });
  });

  it('retries an event whose processing throws, then buries it with its error', async () => {
    const good = await accept(3, { message: 'beside a poison event', exception_type: 'PoisonNeighbour' });
    // Not a valid capture (the API would refuse it), so processing throws on event_time.
    await h.db('error_event_inbox').insert(sealed({ event_time: 'never', exception_type: 'Poison' }));
    const first = await ingestNext(deps, 1000, 30, { maxAttempts: 2 });
    expect(first.stored).toBeGreaterThanOrEqual(3);
    expect(first.failed).toHaveLength(1);
    const poison = await h
      .db('error_event_inbox')
      .where({ env_id: env.env.id })
      .first('uid', 'attempts', 'last_error', h.db.raw('lease_until > now() as waiting'));
    expect(poison).toMatchObject({ attempts: 1, last_error: expect.stringMatching(/invalid time/i), waiting: true });
    await h
      .db('error_event_inbox')
      .where({ uid: poison.uid })
      .update({ lease_until: h.db.raw('now()') });
    expect((await ingestNext(deps, 1000, 30, { maxAttempts: 2 })).failed).toHaveLength(1);
    expect(await h.db('error_event_inbox').where({ uid: poison.uid }).first()).toBeUndefined();
    expect(await h.db('error_event_dead').where({ uid: poison.uid }).first('attempts', 'last_error')).toMatchObject({
      attempts: 2,
      last_error: expect.stringMatching(/invalid time/i),
    });
    expect(await counts('beside a poison event')).toEqual({ groups: 1, occurrences: 3, events: 3 });
    expect(good).toHaveLength(3);
  });

  it('buries an event that outlives every lease (its worker keeps dying) without processing it', async () => {
    const [uid] = await accept(1, { message: 'crash loop', exception_type: 'LoopError' });
    const q = ingestQueries(h.db);
    for (let i = 0; i < 3; i++) {
      expect((await q.claim(1000, 30)).map((r) => r.uid)).toContain(uid);
      await h
        .db('error_event_inbox')
        .where({ uid })
        .update({ lease_until: h.db.raw('now()') });
    }
    const r = await ingestNext(deps, 1000, 30, { maxAttempts: 3 });
    expect(r.stored).toBe(0);
    expect(await h.db('error_event_dead').where({ uid }).first('attempts', 'last_error')).toMatchObject({
      attempts: 4,
      last_error: expect.stringMatching(/gave up/),
    });
    expect(await counts('crash loop')).toEqual({ groups: 0, occurrences: 0, events: 0 });
  });

  it('retries an event while the object store fails, and stores it unsymbolicated on the last attempt', async () => {
    await h.db('error_source_maps').insert({
      id: 'smap_outage',
      env_id: env.env.id,
      release: 'outage-1',
      file: 'https://cdn.example.com/app.js',
      file_path: '/app.js',
      object_key: 'source-maps/x/outage.map',
      size_bytes: 10,
      sha256: 'outage',
    });
    const [uid] = await accept(1, {
      message: 'store outage',
      release: 'outage-1',
      stack_frames: [{ function: 'a', file: 'https://cdn.example.com/app.js', line: 1, column: 5 }],
    });
    const storeDown: MapLoader = () => Promise.reject(new Error('connect ECONNREFUSED'));
    const first = await ingestNext({ ...deps, load: storeDown }, 1000, 30, { maxAttempts: 3 });
    expect(first.failed.map((f) => f.uid)).toEqual([uid]);
    expect(await counts('store outage')).toEqual({ groups: 0, occurrences: 0, events: 0 });
    await h
      .db('error_event_inbox')
      .where({ uid })
      .update({ lease_until: h.db.raw('now()') });
    expect((await ingestNext({ ...deps, load: storeDown }, 1000, 30, { maxAttempts: 3 })).stored).toBe(1);
    const stored = unpackBody((await h.db('error_events').where({ uid }).first('body_deflated')).body_deflated);
    expect(stored.stack_frames[0]).toMatchObject({
      unmapped_reason: 'map_unavailable',
      function: 'a',
      line: 1,
      column: 5,
    });
  });

  it('stores a batch of large events in parts, each event once', async () => {
    const uids = await accept(12, { message: 'in parts', exception_type: 'PartsError' });
    let statements = 0;
    const count = (q: { sql: string }) => void (q.sql.includes('insert into error_events') && (statements += 1));
    h.db.on('query', count);
    try {
      expect((await ingestBatch(deps, uids, { maxAttempts: 10, maxStoreBytes: 1 })).stored).toBe(12);
    } finally {
      h.db.off('query', count);
    }
    expect(statements).toBe(12);
    expect(await counts('in parts')).toEqual({ groups: 1, occurrences: 12, events: 12 });
  });

  it('claims no more stored payload than its byte budget, but always one row', async () => {
    const uids = await accept(10, { message: 'budget', exception_type: 'BudgetError' });
    const q = ingestQueries(h.db);
    const one = (await q.claim(1000, 30, 1)).filter((r) => uids.includes(r.uid));
    expect(one).toHaveLength(1);
    const size = Number(
      (await h.db('error_event_inbox').where({ uid: uids[1] }).first(h.db.raw('pg_column_size(payload_sealed) as s')))
        .s,
    );
    const three = (await q.claim(1000, 30, size * 3)).filter((r) => uids.includes(r.uid));
    expect(three).toHaveLength(3);
    expect((await ingestBatch(deps, uids)).stored).toBe(10);
  });
});
