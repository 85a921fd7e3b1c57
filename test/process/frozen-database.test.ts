// A database that stops answering (a frozen network path: nothing closes, nothing arrives) behind
// a TCP proxy, with a web and a worker process pointed at the proxy: a request waiting on it ends
// within the stated bound with 503 + Retry-After (docs/operations.md), /readyz answers within a
// second (refused outright, too), an accepted capture is stored exactly once after the thaw, and a worker's job whose
// connection froze fails and is retried rather than hanging until the thaw.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { startFreezeProxy, type FreezeProxy } from '../support/freeze-proxy.ts';
import { eventually } from '../support/probes.ts';
import { spawnWeb, spawnWorker, type WebProcess } from '../support/web-process.ts';
import { queuedEvents, sampleEvent } from '../errors/support.ts';

let h: Harness;
let proxy: FreezeProxy;
let web: WebProcess;
let worker: Omit<WebProcess, 'url'>;
beforeAll(async () => {
  h = await createHarness();
  proxy = await startFreezeProxy(h.config.DATABASE_URL);
  web = await spawnWeb(proxy.url);
  worker = await spawnWorker(proxy.url);
}, 60_000);
afterAll(async () => {
  proxy?.thaw();
  await Promise.all([web?.kill(), worker?.kill()]);
  await proxy?.close();
  await h?.close();
});

/** How long the proxy stays frozen: longer than every bound, as long as the old code waited. */
const freezeMs = 16_000;

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await fn();
  return { value, ms: Date.now() - started };
}

/**
 * Waits until no ingest job holds an event of the environment (queued, running, or waiting to
 * retry): what is stored then is final, where a fixed wait only hoped so.
 */
const nothingLeftFor = (envId: string) =>
  eventually(async () => (await queuedEvents(h)).every((q) => q.env_id !== envId), {
    what: 'the ingest jobs of the environment to settle',
    timeoutMs: 60_000,
  });
const storedFor = async (envId: string) =>
  Number((await h.db('error_events').where({ env_id: envId }).count({ n: '*' }).first())?.n);

describe('a database that stops answering', () => {
  it('ends a request waiting on it with 503 + Retry-After, answers /readyz within a second, and stores an accepted capture once', async () => {
    const env = await createTestEnv(h.db);
    const path = `/v1/${env.env.name}/error_groups:capture`;
    const capture = (message: string) =>
      call(web.url, 'POST', path, { key: env.secretKey, body: { error_event: sampleEvent({ message }) } });
    // Warm connections in the web's pools, which the freeze then catches.
    expect((await capture('before the freeze')).status).toBe(202);
    expect((await call(web.url, 'GET', '/readyz')).status).toBe(200);

    proxy.freeze();
    const thaw = setTimeout(() => proxy.thaw(), freezeMs);
    try {
      const inFlight = timed(() => capture('during the freeze'));
      await new Promise((r) => setTimeout(r, 200));
      const ready = await timed(() => call(web.url, 'GET', '/readyz'));
      expect(ready.ms).toBeLessThan(1000);
      expect(ready.value.status).toBe(503);
      expect(ready.value.body).toEqual({ status: 'database_unavailable' });

      const answer = await inFlight;
      expect(answer.ms).toBeLessThan(8000);
      expect(answer.value.status).toBe(503);
      expect(answer.value.headers.get('retry-after')).toBe('5');
      expect(answer.value.body).toMatchObject({ code: 'store_unavailable' });
    } finally {
      clearTimeout(thaw);
      proxy.thaw();
    }
    // After the thaw: ready again, and the capture accepted before the freeze stored exactly once.
    await eventually(async () => (await call(web.url, 'GET', '/readyz')).status === 200, { timeoutMs: 30_000 });
    // Refused outright (every connection cut, each new one closed at once), then back: the same answers.
    proxy.refuse();
    try {
      const refused = await timed(() => capture('while refused'));
      expect(refused.ms).toBeLessThan(8000);
      expect(refused.value.status).toBe(503);
      expect(refused.value.body).toMatchObject({ code: 'store_unavailable' });
      const ready = await timed(() => call(web.url, 'GET', '/readyz'));
      expect(ready.ms).toBeLessThan(1000);
      expect(ready.value.status).toBe(503);
    } finally {
      proxy.thaw();
    }
    await eventually(async () => (await call(web.url, 'GET', '/readyz')).status === 200, { timeoutMs: 30_000 });
    await eventually(async () => (await storedFor(env.env.id)) >= 1, { timeoutMs: 60_000 });
    await nothingLeftFor(env.env.id);
    expect(await storedFor(env.env.id)).toBe(1);
  }, 120_000);

  it("fails and retries a worker's job whose connection froze mid-statement, instead of hanging until the thaw", async () => {
    const env = await createTestEnv(h.db);
    // A lock from beside the proxy holds the worker's store statement until the freeze has begun;
    // released then, its answer waits in the frozen path.
    const blocker = await h.db.transaction();
    let frozenSession: number;
    try {
      await blocker.raw('lock table error_events in exclusive mode');
      const path = `/v1/${env.env.name}/error_groups:capture`;
      const accepted = await call(web.url, 'POST', path, {
        key: env.secretKey,
        body: { error_event: sampleEvent({ message: 'caught by the freeze' }) },
      });
      expect(accepted.status).toBe(202);
      frozenSession = await eventually(
        async () =>
          (
            await h.db.raw<{ rows: { pid: number }[] }>(
              "select pid from pg_stat_activity where application_name like 'cairn-worker%' and wait_event_type = 'Lock'",
            )
          ).rows[0]?.pid,
        { timeoutMs: 30_000 },
      );
      proxy.freeze();
    } finally {
      await blocker.commit();
    }
    await new Promise((r) => setTimeout(r, freezeMs));
    proxy.thaw();
    await eventually(async () => (await storedFor(env.env.id)) === 1, { timeoutMs: 60_000 });
    // The worker gave up the frozen connection (its session ended with its store uncommitted: the
    // store's statement was waiting when the path froze), so the event was stored by another
    // attempt. The old code waited out the freeze on that connection and took the held answer.
    const alive = await h.db.raw<{ rows: unknown[] }>('select 1 from pg_stat_activity where pid = ?', [frozenSession]);
    expect(alive.rows).toEqual([]);
    await nothingLeftFor(env.env.id);
    expect(await storedFor(env.env.id)).toBe(1);
  }, 120_000);
});
