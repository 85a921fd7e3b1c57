// Backpressure (docs/api.md): while an environment has more than `max_pending` events accepted and
// not yet processed, capture and batchCapture answer 429 rate_limited with Retry-After and accept
// nothing; other environments are not held back; once workers drain the backlog, captures are
// accepted again. The pending count rises after the enqueue and falls with the settle. Sentry
// envelopes get the same 429, with X-Sentry-Rate-Limits.
import { beforeAll, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { queues, schedules } from '../../src/queues.ts';
import type { WebHandle } from '../../src/server.ts';
import { startWorker } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { queuedEvents, useBacklogClock } from './support.ts';

let h: Harness;
let web: WebHandle;
let busy: CreatedEnv;
let other: CreatedEnv;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  busy = await createTestEnv(h.db);
  other = await createTestEnv(h.db);
});

const event = (message: string) => ({ event_time: new Date().toISOString(), exception_type: 'Error', message });
const capture = (env: CreatedEnv, message: string) =>
  call(web.url, 'POST', `/v1/${env.env.name}/error_groups:capture`, {
    key: env.secretKey,
    body: { error_event: event(message) },
  });
const pending = async (env: CreatedEnv) =>
  Number((await h.db('error_intake_pending').where({ env_id: env.env.id }).first())?.pending ?? 0);
const backlog = useBacklogClock();

it('refuses captures over max_pending with 429 and Retry-After, and accepts them again once drained', async () => {
  const put = await call(web.url, 'PUT', `/v1/${busy.env.name}/error_settings`, {
    key: busy.secretKey,
    body: { max_pending: 1000 },
  });
  expect(put.status).toBe(200);
  const batch = await call<{ results: { uid?: string }[] }>(
    web.url,
    'POST',
    `/v1/${busy.env.name}/error_groups:batchCapture`,
    { key: busy.secretKey, body: { error_events: Array.from({ length: 1000 }, (_, i) => event(`backlog ${i}`)) } },
  );
  expect(batch.status).toBe(202);
  expect(batch.body.results.every((r) => r.uid)).toBe(true);
  // Counted a tenth of a second after the commit (writer.ts PendingCounts).
  await eventually(async () => (await pending(busy)) === 1000);

  // Each web process reads the count at most once a second.
  backlog.aSecondLater();
  const queued = (await queuedEvents(h)).length;
  const refused = await capture(busy, 'one too many');
  expect(refused.status).toBe(429);
  expect(refused.body).toMatchObject({ code: 'rate_limited', details: { pending: 1000, max_pending: 1000 } });
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  const refusedBatch = await call(web.url, 'POST', `/v1/${busy.env.name}/error_groups:batchCapture`, {
    key: busy.secretKey,
    body: { error_events: [event('also too many')] },
  });
  expect(refusedBatch.status).toBe(429);
  // A Sentry SDK is told to back off the way it understands (docs/api.md "Sentry compatibility").
  const envelope = await fetch(
    `${web.url}/api/${busy.clientKey.projectNumber}/envelope/?sentry_key=${busy.clientKey.publicKey}`,
    { method: 'POST', body: `{}\n{"type":"event"}\n{"message":"held back"}` },
  );
  expect(envelope.status).toBe(429);
  expect(envelope.headers.get('x-sentry-rate-limits')).toMatch(/^\d+:error:project$/);
  expect(Number(envelope.headers.get('retry-after'))).toBeGreaterThan(0);
  expect((await queuedEvents(h)).length).toBe(queued);
  expect(await pending(busy)).toBe(1000);
  // Another environment is not held back.
  expect((await capture(other, 'elsewhere')).status).toBe(202);

  const worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  try {
    await eventually(async () => (await pending(busy)) === 0 && (await pending(other)) === 0, { timeoutMs: 60_000 });
  } finally {
    await worker.stop();
  }
  backlog.aSecondLater();
  expect((await capture(busy, 'after the drain')).status).toBe(202);
  await eventually(async () => (await pending(busy)) === 1);
  expect(Number((await h.db('error_events').where({ env_id: busy.env.id }).count({ n: '*' }).first())!.n)).toBe(1000);
});

it('puts a wrong pending count right every 5 minutes (errors.reconcile-pending), a deficit as an excess', async () => {
  expect(schedules.filter((s) => s.queue === 'errors.reconcile-pending').map((s) => s.cron)).toEqual(['*/5 * * * *']);
  const queued = (await queuedEvents(h)).filter((q) => q.env_id === busy.env.id).length;
  expect(queued).toBe(1);
  const worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  try {
    // Counts a web process lost (it died before writing them): 50,000 low.
    await h.db('error_intake_pending').where({ env_id: busy.env.id }).update({ pending: -50_000 });
    await worker.jobs.enqueue(h.db, 'errors.reconcile-pending', {});
    // The event queued after the drain is stored by this worker too: the count ends at what waits.
    await eventually(async () => (await pending(busy)) === 0);
    expect(Number((await h.db('error_intake_pending').where({ env_id: busy.env.id }).first())!.pending)).toBe(0);

    await h.db('error_intake_pending').where({ env_id: busy.env.id }).update({ pending: 123_456 });
    await worker.jobs.enqueue(h.db, 'errors.reconcile-pending', {});
    await eventually(async () => (await pending(busy)) === 0);
  } finally {
    await worker.stop();
  }
});
