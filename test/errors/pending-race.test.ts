// The backpressure count under the race of an idle worker and the web (writer.ts PendingCounts):
// the web adds its commits' events a tenth of a second after them, and a worker woken by the
// jobs' NOTIFY may store them and subtract first. The race is made to happen every time: the web's
// count waits (pendingCountHooks) until the real worker has stored every event. The count must end
// exact, /metrics must agree with the queue, and captures must not be refused for phantom events.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { pendingCountHooks } from '../../src/domain/errors/intake/writer.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { queues } from '../../src/queues.ts';
import type { WebHandle } from '../../src/server.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { queuedEvents, useBacklogClock } from './support.ts';

const token = 'metrics-token-for-the-tests-0123456789';
let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let worker: WorkerHandle<typeof queues> | undefined;

const stack = useWeb({}, { CAIRN_METRICS_TOKEN: token });
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  pendingCountHooks.beforeFlush = undefined;
  await worker?.stop();
});

const event = (message: string) => ({ event_time: new Date().toISOString(), exception_type: 'Error', message });
const countRow = async () =>
  (await h.db('error_intake_pending').where({ env_id: env.env.id }).first()) as { pending: string } | undefined;
const stored = async () =>
  Number((await h.db('error_events').where({ env_id: env.env.id }).count({ n: '*' }).first())!.n);
const backlog = useBacklogClock();

async function scrape(): Promise<string> {
  const res = await fetch(`${web.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return res.text();
}

it("keeps the count exact when an idle worker stores a commit's events before the web counts them", async () => {
  const put = await call(web.url, 'PUT', `/v1/${env.env.name}/error_settings`, {
    key: env.secretKey,
    body: { max_pending: 1000 },
  });
  expect(put.status).toBe(200);
  worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });

  // A first event, stored and counted out: the environment's count row exists, at 0.
  const first = await call(web.url, 'POST', `/v1/${env.env.name}/error_groups:capture`, {
    key: env.secretKey,
    body: { error_event: event('first') },
  });
  expect(first.status).toBe(202);
  await eventually(async () => (await stored()) === 1 && Number((await countRow())?.pending) === 0);

  // The web's count of the next commit waits until the worker has stored all of its events.
  let before: number | undefined;
  let hooked = 0;
  pendingCountHooks.beforeFlush = async () => {
    hooked += 1;
    await eventually(async () => (await queuedEvents(h)).length === 0 && (await stored()) === 1001, {
      timeoutMs: 60_000,
    });
    before = Number((await countRow())?.pending);
  };
  const batch = await call<{ results: { uid?: string }[] }>(
    web.url,
    'POST',
    `/v1/${env.env.name}/error_groups:batchCapture`,
    { key: env.secretKey, body: { error_events: Array.from({ length: 1000 }, (_, i) => event(`raced ${i}`)) } },
  );
  expect(batch.status).toBe(202);
  expect(batch.body.results.every((r) => r.uid)).toBe(true);
  await eventually(async () => before !== undefined && Number((await countRow())?.pending) !== before, {
    timeoutMs: 60_000,
  });
  pendingCountHooks.beforeFlush = undefined;
  // The race did happen: the worker's subtraction landed before the web's addition.
  expect(hooked).toBe(1);

  // Nothing waits, nothing was lost or stored twice, and the count says so.
  expect(await queuedEvents(h)).toEqual([]);
  expect(await stored()).toBe(1001);
  expect(Number((await countRow())?.pending)).toBe(0);
  const text = await scrape();
  expect(text).toMatch(/^cairn_intake_pending 0$/m);
  expect(text).not.toContain(`cairn_env_intake_pending{env="${env.env.name}"}`);

  // Backpressure reads the same count (at most once a second): the next capture is accepted.
  backlog.aSecondLater();
  const next = await call(web.url, 'POST', `/v1/${env.env.name}/error_groups:capture`, {
    key: env.secretKey,
    body: { error_event: event('after the race') },
  });
  expect(next.status).toBe(202);
  await eventually(async () => (await stored()) === 1002 && Number((await countRow())?.pending) === 0);
});
