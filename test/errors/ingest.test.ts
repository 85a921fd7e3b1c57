// The worker's store step and its queue on the real Postgres and pg-boss: idempotent on the uid (a
// re-run stores nothing twice), occurrence_count equal to the stored events, concurrent first
// events of a new group making exactly one group, a job whose claim ran out while it was being
// worked committing once, retries and dead letters, and the byte budgets that keep a batch of large
// events as small in memory as an ordinary one. (A worker process killed mid-batch: crash.test.ts.)
import type { Knex } from 'knex';
import { fromKnex } from 'pg-boss';
import { createDb } from '../../src/db.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyringFromConfig } from '../../src/crypto.ts';
import { newEventUid } from '../../src/domain/errors/intake/capture.ts';
import { errorEventInput, type ErrorEventInput } from '../../src/contract/error-capture.ts';
import { createPipelineCaches } from '../../src/domain/errors/pipeline/caches.ts';
import { unpackBody } from '../../src/domain/errors/pipeline/event-codec.ts';
import {
  ingestEvents,
  type IngestDeps,
  type IngestOptions,
  type JobEvent,
} from '../../src/domain/errors/intake/ingest.ts';
import { jobLimits, packJobs } from '../../src/domain/errors/intake/job.ts';
import { sealPayload } from '../../src/domain/errors/intake/sealed-payload.ts';
import { enqueueEvents } from '../../src/domain/errors/intake/writer.ts';
import type { MapLoader } from '../../src/domain/errors/pipeline/symbolicate.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { queues, type AppJobs as Jobs } from '../../src/queues.ts';
import { startWorker } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { deadLetters, ingestQueued, queuedEvents, sampleEvent, testJobs } from './support.ts';

let h: Harness;
let env: CreatedEnv;
let deps: IngestDeps;
let jobs: Jobs;
let txPool: Knex;
const noMaps: MapLoader = () => Promise.reject(new Error('no maps in this test'));

beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
  deps = { db: h.db, keyring: keyringFromConfig(h.config), load: noMaps, caches: createPipelineCaches() };
  jobs = await testJobs(h);
  txPool = createDb(h.config, { poolMax: 8 });
  // This file's database only: two attempts, a second apart, so retries and dead letters show in seconds.
  await jobs.boss.updateQueue('errors.ingest', { retryLimit: 1, retryDelay: 1, retryBackoff: false });
});
afterAll(async () => {
  await jobs?.boss.stop({ graceful: false, close: true });
  await txPool?.destroy();
  await h?.close();
});

/** An event as capture seals it; `payload` may be one the API would refuse. */
const sealed = (payload: unknown, uid = newEventUid('c0')) =>
  sealPayload(deps.keyring, env.env.id, uid, payload as ErrorEventInput);

const events = (n: number, patch: Record<string, unknown> = {}) =>
  Array.from({ length: n }, () => sealed(errorEventInput.parse(sampleEvent(patch))));

/** The events as a job's fetch hands them to the store step. */
const asFetched = (rows: ReturnType<typeof sealed>[], lastAttempt = false): JobEvent[] =>
  rows.map((r) => ({ ...r, job: 'j', receive_time: new Date(), lastAttempt }));

/**
 * The store step on a transaction of its own, committed. The transaction comes from a pool of its
 * own, as a worker's comes from pg-boss's: the step's reads must not wait behind it.
 */
const storeOnce = (rows: JobEvent[], options?: IngestOptions, d = deps) =>
  txPool.transaction((trx) => ingestEvents(d, fromKnex(trx), rows, options));

const counts = async (fingerprintMessage: string) => {
  const groups = await h
    .db('error_groups')
    .where({ env_id: env.env.id })
    .whereLike('title', `%${fingerprintMessage}%`)
    .select('id', 'occurrence_count');
  const stored = await h
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
    events: Number(stored?.n),
  };
};

describe('the store step', () => {
  it('stores each event once, however often its job runs, and the worker deletes the stored job', async () => {
    const rows = events(5, { message: 'rerun' });
    await enqueueEvents(h.db, jobs, rows);
    expect(await ingestQueued(h, jobs)).toBe(1);
    expect((await queuedEvents(h)).filter((q) => rows.some((r) => r.uid === q.uid))).toEqual([]);
    // A run that finds the events again (the worst case of at-least-once) still adds nothing.
    expect((await storeOnce(asFetched(rows))).stored).toBe(0);
    expect(await counts('rerun')).toEqual({ groups: 1, occurrences: 5, events: 5 });
  });

  it('makes one group when many batches bring its first events at once', async () => {
    const batches = Array.from({ length: 6 }, () =>
      events(20, { message: 'first at once', exception_type: 'RaceError' }),
    );
    const results = await Promise.all(batches.map((rows) => storeOnce(asFetched(rows))));
    expect(results.reduce((a, r) => a + r.stored, 0)).toBe(120);
    expect(await counts('first at once')).toEqual({ groups: 1, occurrences: 120, events: 120 });
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
    const rows = events(1, {
      message: 'store outage',
      release: 'outage-1',
      stack_frames: [{ function: 'a', file: 'https://cdn.example.com/app.js', line: 1, column: 5 }],
    });
    const storeDown: MapLoader = () => Promise.reject(new Error('connect ECONNREFUSED'));
    const first = await storeOnce(asFetched(rows), undefined, { ...deps, load: storeDown });
    expect(first.failed.map((f) => [f.event.uid, f.outcome])).toEqual([[rows[0]!.uid, 'retry']]);
    expect(await counts('store outage')).toEqual({ groups: 0, occurrences: 0, events: 0 });
    expect((await storeOnce(asFetched(rows, true), undefined, { ...deps, load: storeDown })).stored).toBe(1);
    const stored = unpackBody(
      (await h.db('error_events').where({ uid: rows[0]!.uid }).first('body_deflated')).body_deflated,
    );
    expect(stored.stack_frames[0]).toMatchObject({
      unmapped_reason: 'map_unavailable',
      function: 'a',
      line: 1,
      column: 5,
    });
  });

  it('stores a batch of large events in parts, each event once', async () => {
    const rows = events(12, { message: 'in parts', exception_type: 'PartsError' });
    let statements = 0;
    const count = (q: { sql: string }) => void (q.sql.includes('insert into error_events') && (statements += 1));
    txPool.on('query', count);
    try {
      expect((await storeOnce(asFetched(rows), { maxStoreBytes: 1 })).stored).toBe(12);
    } finally {
      txPool.off('query', count);
    }
    expect(statements).toBe(12);
    expect(await counts('in parts')).toEqual({ groups: 1, occurrences: 12, events: 12 });
  });

  it('drops the events of an environment deleted since they were accepted, and stores the rest', async () => {
    const gone = await createTestEnv(h.db);
    const orphan = sealPayload(deps.keyring, gone.env.id, newEventUid('c0'), errorEventInput.parse(sampleEvent()));
    await h.db('envs').where({ id: gone.env.id }).delete();
    const rows = events(2, { message: 'beside an orphan' });
    const r = await storeOnce(asFetched([orphan, ...rows]));
    expect(r).toMatchObject({ stored: 2, dropped: 1, failed: [] });
  });
});

describe('jobs', () => {
  it('hold at most 50 events or 32 KB of sealed payload, a larger event alone, in order', () => {
    const rows = events(120, { message: 'packing' });
    const packed = packJobs(rows);
    expect(packed.map((j) => j.events.length)).toEqual([50, 50, 20]);
    expect(packed.flatMap((j) => j.events.map((e) => e.uid))).toEqual(rows.map((r) => r.uid));
    const big = { ...rows[0]!, payload_sealed: 'x'.repeat(jobLimits.sealedBytes + 1) };
    const mixed = packJobs([rows[1]!, big, rows[2]!]);
    expect(mixed.map((j) => j.events.map((e) => e.uid))).toEqual([[rows[1]!.uid], [big.uid], [rows[2]!.uid]]);
    const fitting = packJobs(rows, { events: 1000, sealedBytes: rows[0]!.payload_sealed.length * 3 });
    expect(fitting[0]!.events).toHaveLength(3);
  });

  it('retry a poison event on its own, then dead-letter it with its error; its neighbours are stored once', async () => {
    const good = events(3, { message: 'beside a poison event', exception_type: 'PoisonNeighbour' });
    // Not a valid capture (the API would refuse it), so processing throws on event_time.
    const poison = sealed({ event_time: 'never', exception_type: 'Poison' });
    await enqueueEvents(h.db, jobs, [...good, poison]);
    expect(await ingestQueued(h, jobs)).toBe(1);
    expect(await counts('beside a poison event')).toEqual({ groups: 1, occurrences: 3, events: 3 });
    // The poison event goes on alone, in a job of its own, and is tried until its last attempt.
    expect((await queuedEvents(h)).map((q) => q.uid)).toEqual([poison.uid]);
    await eventually(
      async () => (await ingestQueued(h, jobs)) > 0 && (await deadLetters(h)).some((d) => d.uid === poison.uid),
      {
        timeoutMs: 20_000,
        intervalMs: 200,
      },
    );
    expect((await deadLetters(h)).find((d) => d.uid === poison.uid)).toMatchObject({
      error: expect.stringMatching(/invalid time/i),
    });
    expect(await queuedEvents(h)).toEqual([]);
    expect(await counts('beside a poison event')).toEqual({ groups: 1, occurrences: 3, events: 3 });
  });

  it('dead-letter an event that outlives every claim (its worker keeps dying) without processing it', async () => {
    const rows = events(1, { message: 'crash loop', exception_type: 'LoopError' });
    await enqueueEvents(h.db, jobs, rows);
    // Each claim is lost as a killed worker's is (the supervisor fails it), until none remain.
    for (let attempt = 0; attempt < 2; attempt++) {
      const [job] = await eventually(async () => {
        const fetched = await jobs.boss.fetch('errors.ingest', { batchSize: 10 });
        return fetched.length > 0 ? fetched : undefined;
      });
      await jobs.boss.fail('errors.ingest', job!.id, { error: 'heartbeat lost' });
    }
    await eventually(async () => (await deadLetters(h)).some((d) => d.uid === rows[0]!.uid));
    expect(await queuedEvents(h)).toEqual([]);
    expect(await counts('crash loop')).toEqual({ groups: 0, occurrences: 0, events: 0 });
  });

  it('commit once when a claim runs out while the job is worked and another worker takes it', async () => {
    const rows = events(30, { message: 'double run', exception_type: 'DoubleError' });
    const worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
    const lock = await h.db.transaction();
    try {
      // The store waits on this environment's row (its foreign keys), so the first run is held mid-store.
      await lock('envs').where({ id: env.env.id }).forUpdate().first();
      await enqueueEvents(h.db, jobs, rows);
      const [job] = await eventually(async () => {
        const q = await queuedEvents(h);
        return q.length > 0 && q.every((e) => e.state === 'active') ? q : undefined;
      });
      // The claim is taken away (as the supervisor does when a heartbeat stops): the job is retried,
      // and the worker's other loop takes it while the first run still waits.
      await jobs.boss.fail('errors.ingest', job!.job, { error: 'claim ran out' });
      await eventually(async () => (await queuedEvents(h)).some((e) => e.state === 'active'), { timeoutMs: 10_000 });
    } finally {
      await lock.commit();
    }
    await eventually(async () => (await queuedEvents(h)).length === 0, { timeoutMs: 20_000 });
    await worker.stop();
    expect(await counts('double run')).toEqual({ groups: 1, occurrences: 30, events: 30 });
  });
});
