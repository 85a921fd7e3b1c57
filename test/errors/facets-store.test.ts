// Groups' facets as the worker's store keeps them (src/domain/errors/intake/store-queries.ts), on
// the real Postgres with the real web and worker: each stored event's tags (with `release` and
// `level`) and user counted exactly once, whatever repeats it (an SDK's retry of one event_id, a
// re-run of its job, two runs of one job at once), parallel batches of several workers without a
// deadlock, secrets stored scrubbed, `user_count` and `first_release`, and the daily prune.
import type { Knex } from 'knex';
import { fromKnex } from 'pg-boss';
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { keyringFromConfig } from '../../src/crypto.ts';
import { createDb } from '../../src/db.ts';
import { createPipelineCaches } from '../../src/domain/errors/pipeline/caches.ts';
import { ingestEvents, type IngestDeps, type JobEvent } from '../../src/domain/errors/intake/ingest.ts';
import { pruneErrors } from '../../src/domain/errors/retention/prune.ts';
import { enqueueEvents } from '../../src/domain/errors/intake/writer.ts';
import { eventually } from '../support/probes.ts';
import { capture, queuedEvents, readStored, sampleEvent, testJobs, useStack } from './support.ts';
import { facetsOfGroup, fetchedSdkEvent, sdkEvent, tally } from './facets-support.ts';
import { queues, type AppJobs } from '../../src/queues.ts';
import { startWorker } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';

const t = useStack();
let deps: IngestDeps;
let txPool: Knex;
let jobs: AppJobs;

beforeAll(async () => {
  deps = {
    db: t.h.db,
    keyring: keyringFromConfig(t.h.config),
    load: () => Promise.reject(new Error('no maps in this test')),
    caches: createPipelineCaches(),
  };
  txPool = createDb(t.h.config, { poolMax: 8 });
  jobs = await testJobs(t.h);
});
afterAll(async () => {
  await jobs?.boss.stop({ graceful: false, close: true });
  await txPool?.destroy();
});

const facets = (type: string) => facetsOfGroup(t.h.db, t.env.env.id, type);
const storeOnce = (rows: JobEvent[]) => txPool.transaction((trx) => ingestEvents(deps, fromKnex(trx), rows));
const key = () => t.env.clientKey.publicKey;
const postSdk = async (event: Record<string, unknown>) => {
  const res = await fetch(`${t.s.web.url}/api/${t.env.clientKey.projectNumber}/store/?sentry_key=${key()}`, {
    method: 'POST',
    body: JSON.stringify(event),
  });
  expect(res.status).toBe(200);
};
const settled = () =>
  eventually(async () => (await queuedEvents(t.h)).filter((q) => q.env_id === t.env.env.id).length === 0);
const storedOf = async (type: string) =>
  Number(
    (await t.h
      .db('error_events as e')
      .join('error_groups as g', 'g.id', 'e.group_id')
      .where('g.env_id', t.env.env.id)
      .whereLike('g.title', `${type}%`)
      .count<{ n: string }[]>('* as n')
      .first())!.n,
  );

const batchOf = (type: string, n: number, offset: number) =>
  Array.from({ length: n }, (_, i) =>
    fetchedSdkEvent(
      deps.keyring,
      t.env.env.id,
      sdkEvent(`${type}${(offset + i) % 3}`, {
        tags: { color: `c${(offset + i) % 4}`, shard: `s${(offset + i) % 5}` },
        user: { id: `user-${(offset + i) % 7}` },
      }),
    ),
  );

describe('over HTTP, through the real worker', () => {
  it('counts each stored event’s tags, release, level and user once; an SDK’s retry of an event_id not at all', async () => {
    const users = ['u1', 'u2', 'u3', 'u1', 'u2', undefined];
    const events = users.map((id, i) =>
      sdkEvent('FacetOnce', {
        release: i < 4 ? 'web@1' : 'web@2',
        level: i % 2 === 0 ? 'warning' : undefined,
        tags: { browser: i % 3 === 0 ? 'Chrome' : 'Firefox', level: 'debug' },
        ...(id ? { user: { id, email: `${id}@example.com` } } : {}),
      }),
    );
    for (const e of events) await postSdk(e);
    // The SDK sends the first two again (its retry after a lost answer): same event_id, stored once.
    await postSdk(events[0]!);
    await postSdk(events[1]!);
    await settled();
    expect(await storedOf('FacetOnce')).toBe(6);
    const f = await facets('FacetOnce');
    expect(f.tags).toEqual({
      'browser=Chrome': 2,
      'browser=Firefox': 4,
      'release=web@1': 4,
      'release=web@2': 2,
      'level=warning': 3,
      'level=error': 3,
    });
    expect(f.users).toEqual({ 'id:u1': 2, 'id:u2': 2, 'id:u3': 1 });
    expect(f.user_count).toBe(3);
  });

  it('stores a secret in a tag value scrubbed, in the tags as in the body', async () => {
    const uid = await capture(
      t.s.web,
      t.env,
      sampleEvent({
        exception_type: 'FacetSecret',
        tags: { api_key: 'plant-key-1', dsn: 'postgres://app:plant-pw@db.internal/app', region: 'eu' },
      }),
    );
    await settled();
    expect(await storedOf('FacetSecret')).toBe(1);
    const rows = await t.h.db('error_group_tags').where({ env_id: t.env.env.id }).select('key', 'value');
    expect(JSON.stringify(rows)).not.toContain('plant-');
    const f = await facets('FacetSecret');
    expect(f.tags).toMatchObject({ 'api_key=[Filtered]': 1, 'region=eu': 1, 'level=error': 1 });
    // The same values as the stored body's tags.
    const body = (await readStored<{ tags: Record<string, string> }>(t.s.web, t.env, uid)).body;
    expect(body.tags.dsn).toContain('[Filtered]');
    expect(f.tags).toMatchObject({ [`dsn=${body.tags.dsn}`]: 1, [`api_key=${body.tags.api_key}`]: 1 });
  });

  it('keeps the release of the group’s earliest event as its first release', async () => {
    const at = (s: number) => Date.parse('2026-11-20T10:00:00Z') / 1000 + s;
    await postSdk(sdkEvent('FacetFirst', { release: 'r2', timestamp: at(10) }));
    await settled();
    expect((await facets('FacetFirst')).first_release).toBe('r2');
    // A later batch brings an earlier event: its release is the first one now.
    await postSdk(sdkEvent('FacetFirst', { release: 'r1', timestamp: at(0) }));
    await settled();
    expect((await facets('FacetFirst')).first_release).toBe('r1');
    await postSdk(sdkEvent('FacetFirst', { release: 'r3', timestamp: at(5) }));
    await settled();
    expect((await facets('FacetFirst')).first_release).toBe('r1');
  });
});

describe('the store step', () => {
  it('counts exactly once across parallel batches of several workers, and a re-run adds nothing', async () => {
    // Six batches at once, each with events of three groups, their tags and users interleaved.
    const batches = Array.from({ length: 6 }, (_, b) => batchOf('FacetRace', 21, b * 21));
    const results = await Promise.all(batches.map((rows) => storeOnce(rows)));
    expect(results.reduce((a, r) => a + r.stored, 0)).toBe(126);
    // A job run again (its first run committed): nothing is counted twice.
    expect((await storeOnce(batches[0]!)).stored).toBe(0);
    for (const g of [0, 1, 2]) {
      const mine = Array.from({ length: 126 }, (_, i) => i).filter((i) => i % 3 === g);
      const f = await facets(`FacetRace${g}`);
      expect(f.tags).toEqual({
        ...tally(mine.map((i) => `color=c${i % 4}`)),
        ...tally(mine.map((i) => `shard=s${i % 5}`)),
        'level=error': mine.length,
      });
      expect(f.users).toEqual(tally(mine.map((i) => `id:user-${i % 7}`)));
      expect(f.user_count).toBe(Object.keys(f.users).length);
    }
  });

  it('counts exactly once when two real workers drain many jobs of the same groups at once', async () => {
    const second = await startWorker(t.h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
    try {
      const rows = batchOf('FacetWorkers', 600, 0).map(({ job: _j, receive_time: _r, lastAttempt: _l, ...r }) => r);
      // Jobs of 20 events each, queued at once: both workers' fetches hold events of every group.
      for (let i = 0; i < rows.length; i += 20) await enqueueEvents(t.h.db, jobs, rows.slice(i, i + 20));
      await eventually(async () => (await queuedEvents(t.h)).length === 0, { timeoutMs: 60_000 });
    } finally {
      await second.stop();
    }
    for (const g of [0, 1, 2]) {
      const mine = Array.from({ length: 600 }, (_, i) => i).filter((i) => i % 3 === g);
      const f = await facets(`FacetWorkers${g}`);
      expect(f.tags).toEqual({
        ...tally(mine.map((i) => `color=c${i % 4}`)),
        ...tally(mine.map((i) => `shard=s${i % 5}`)),
        'level=error': mine.length,
      });
      expect(f.users).toEqual(tally(mine.map((i) => `id:user-${i % 7}`)));
      expect(f.user_count).toBe(7);
    }
  });

  it('commits once when a claim runs out while the job is worked and another worker takes it', async () => {
    const rows = batchOf('FacetDouble', 30, 0).map(({ job: _j, receive_time: _r, lastAttempt: _l, ...r }) => r);
    const lock = await t.h.db.transaction();
    try {
      // The store waits on this environment's row (its foreign keys), so the first run is held mid-store.
      await lock('envs').where({ id: t.env.env.id }).forUpdate().first();
      await enqueueEvents(t.h.db, jobs, rows);
      const [job] = await eventually(async () => {
        const q = (await queuedEvents(t.h)).filter((e) => rows.some((r) => r.uid === e.uid));
        return q.length > 0 && q.every((e) => e.state === 'active') ? q : undefined;
      });
      await jobs.boss.fail('errors.ingest', job!.job, { error: 'claim ran out' });
      await eventually(async () => (await queuedEvents(t.h)).some((e) => e.state === 'active'), { timeoutMs: 10_000 });
    } finally {
      await lock.commit();
    }
    await eventually(async () => (await queuedEvents(t.h)).length === 0, { timeoutMs: 20_000 });
    for (const g of [0, 1, 2]) {
      const f = await facets(`FacetDouble${g}`);
      expect(f.tags['level=error']).toBe(10);
      expect(Object.values(f.users).reduce((a, n) => a + n, 0)).toBe(10);
      expect(f.user_count).toBe(Object.keys(f.users).length);
    }
  });
});

describe('the daily prune', () => {
  it('deletes tag and user rows past retention and lowers user_count to the users left', async () => {
    await storeOnce(batchOf('FacetPrune', 14, 0));
    const group = await t.h
      .db('error_groups')
      .where({ env_id: t.env.env.id })
      .whereLike('title', 'FacetPrune0%')
      .first();
    const before = await facets('FacetPrune0');
    expect(before.user_count).toBe(5);
    // Two users and a tag value last seen 100 days ago (past the default 90 days' retention).
    const old = new Date(Date.now() - 100 * 86_400_000);
    await t.h
      .db('error_group_users')
      .where({ group_id: group.id })
      .whereIn('user_key', ['id:user-0', 'id:user-3'])
      .update({ last_seen_time: old });
    await t.h
      .db('error_group_tags')
      .where({ group_id: group.id, key: 'color', value: 'c0' })
      .update({ last_seen_time: old });
    await pruneErrors(t.h.db, new Date(), { envId: t.env.env.id });
    const after = await facets('FacetPrune0');
    expect(Object.keys(after.users).sort()).toEqual(
      Object.keys(before.users)
        .filter((k) => k !== 'id:user-0' && k !== 'id:user-3')
        .sort(),
    );
    expect(after.user_count).toBe(3);
    expect(after.tags['color=c0']).toBeUndefined();
    expect(after.tags['level=error']).toBe(before.tags['level=error']);
  });
});
