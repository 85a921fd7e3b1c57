// Idempotent capture: within an environment an event named by `event_id` (32 hex, or a UUID
// normalised to it) is accepted once; a repeat answers 202 with the first uid and stores nothing.
// Concurrent repeats across two web processes agree on one uid. A web process killed (SIGKILL)
// mid-batch while its client retries with the same ids (the SDK's way) stores every event exactly
// once. The SDK names every event and retries on connection errors.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CairnClient } from '../../src/sdk/client.ts';
import { ErrorGroupsApi } from '../../src/sdk/errors.ts';
import { call } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { startSlowProxy } from '../support/slow-proxy.ts';
import { spawnWeb } from '../support/web-process.ts';
import { envBase, queuedEvents, sampleEvent, useStack } from './support.ts';

type Json = Record<string, unknown>;
const t = useStack();

const id = () => randomBytes(16).toString('hex');
const capture = (base: string, event: Json) =>
  call<Json>(base, 'POST', `${envBase(t.env)}/error_groups:capture`, {
    key: t.env.secretKey,
    body: { error_event: event },
  });
const stored = async (uids: string[]) =>
  Number((await t.h.db('error_events').whereIn('uid', uids).count<{ n: string }[]>('* as n').first())!.n);
const pending = async () => (await queuedEvents(t.h)).filter((q) => q.env_id === t.env.env.id).length;

describe('a named event', () => {
  it('is accepted once: a repeat, in hex or UUID form, answers the first uid and stores nothing new', async () => {
    const eventId = id();
    const uuid =
      `${eventId.slice(0, 8)}-${eventId.slice(8, 12)}-${eventId.slice(12, 16)}-${eventId.slice(16, 20)}-${eventId.slice(20)}`.toUpperCase();
    const first = await capture(t.s.web.url, sampleEvent({ event_id: eventId }));
    const again = await capture(t.s.web.url, sampleEvent({ event_id: eventId, message: 'a retry' }));
    const asUuid = await capture(t.s.web.url, sampleEvent({ event_id: uuid }));
    expect([first.status, again.status, asUuid.status]).toEqual([202, 202, 202]);
    expect(again.body.uid).toBe(first.body.uid);
    expect(asUuid.body.uid).toBe(first.body.uid);
    await eventually(async () => expect(await pending()).toBe(0));
    expect(await stored([String(first.body.uid)])).toBe(1);
    const bad = await capture(t.s.web.url, sampleEvent({ event_id: 'not-an-id' }));
    expect(bad).toMatchObject({
      status: 400,
      body: { code: 'invalid_request', message: expect.stringContaining('event_id') },
    });
  });

  it('is the same uid for repeats inside one batch and across batches, each item answered in place', async () => {
    const [a, b] = [id(), id()];
    const first = await call<{ results: { uid: string }[] }>(
      t.s.web.url,
      'POST',
      `${envBase(t.env)}/error_groups:batchCapture`,
      {
        key: t.env.secretKey,
        body: {
          error_events: [
            sampleEvent({ event_id: a }),
            sampleEvent({ event_id: a }),
            sampleEvent({ event_id: b }),
            sampleEvent(),
          ],
        },
      },
    );
    expect(first.status).toBe(202);
    const [r0, r1, r2, r3] = first.body.results;
    expect(r1!.uid).toBe(r0!.uid);
    expect(r2!.uid).not.toBe(r0!.uid);
    const second = await call<{ results: { uid: string }[] }>(
      t.s.web.url,
      'POST',
      `${envBase(t.env)}/error_groups:batchCapture`,
      {
        key: t.env.secretKey,
        body: { error_events: [sampleEvent({ event_id: b }), sampleEvent({ event_id: id() })] },
      },
    );
    expect(second.body.results[0]!.uid).toBe(r2!.uid);
    await eventually(async () => expect(await pending()).toBe(0));
    expect(await stored([r0!.uid, r2!.uid, r3!.uid, second.body.results[1]!.uid])).toBe(4);
  });

  it('sent at once to two web processes, many times over, gets one uid and is stored once', async () => {
    const other = await spawnWeb(t.h.config.DATABASE_URL);
    try {
      const eventId = id();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          capture(i % 2 ? other.url : t.s.web.url, sampleEvent({ event_id: eventId })),
        ),
      );
      const uids = new Set(answers.map((a) => a.body.uid));
      expect(answers.every((a) => a.status === 202)).toBe(true);
      expect(uids.size).toBe(1);
      await eventually(async () => expect(await pending()).toBe(0));
      expect(await stored([...uids].map(String))).toBe(1);
    } finally {
      await other.stop();
    }
  });
});

describe('a Sentry event', () => {
  // Sentry's routes answer the SDK's own id, so its claim is made as it is stored (the worker):
  // copies accepted at once by two web processes, and copies sent after it was stored, are
  // queued, and only the first stored counts.
  it('sent again and again, at once to two web processes and after it was stored, is stored once', async () => {
    const other = await spawnWeb(t.h.config.DATABASE_URL);
    try {
      const eventId = id();
      const body = [
        JSON.stringify({ event_id: eventId }),
        JSON.stringify({ type: 'event' }),
        JSON.stringify({ event_id: eventId, exception: { values: [{ type: 'RetryError', value: 'sent twice' }] } }),
      ].join('\n');
      const send = (base: string) =>
        fetch(`${base}/api/${t.env.clientKey.projectNumber}/envelope/?sentry_key=${t.env.clientKey.publicKey}`, {
          method: 'POST',
          body,
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as Json }));
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i % 2 ? other.url : t.s.web.url)));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      expect(new Set(answers.map((a) => a.body.id))).toEqual(new Set([eventId]));
      await eventually(async () => expect(await pending()).toBe(0));
      expect((await send(t.s.web.url)).status).toBe(200);
      await eventually(async () => expect(await pending()).toBe(0));

      const claims = await t.h.db('error_event_ids').where({ env_id: t.env.env.id, event_id: eventId });
      expect(claims).toHaveLength(1);
      expect(await stored([claims[0].uid as string])).toBe(1);
      const groups = await t.h.db('error_groups').where({ env_id: t.env.env.id, title: 'RetryError: sent twice' });
      expect(groups.map((g) => Number(g.occurrence_count))).toEqual([1]);
      const read = await call<Json>(t.s.web.url, 'GET', `${envBase(t.env)}/error_groups/-/error_events/${eventId}`, {
        key: t.env.secretKey,
      });
      expect(read.status).toBe(200);
      expect(String(read.body.name)).toContain(claims[0].uid as string);
    } finally {
      await other.stop();
    }
  });
});

describe('a web process killed mid-batch', () => {
  it('loses nothing and stores nothing twice when the client retries with the same ids', async () => {
    const victim = await spawnWeb(t.h.config.DATABASE_URL);
    // Answers are held back on their way to the client, so the victim commits batches whose
    // answers never arrive when it dies: exactly the requests a client must retry.
    const proxy = await startSlowProxy(new URL(victim.url), 2_000, 'answers');
    try {
      const batches = Array.from({ length: 12 }, () =>
        Array.from({ length: 200 }, () => sampleEvent({ event_id: id() })),
      );
      const ids = batches.flat().map((e) => String(e.event_id));
      const send = (base: string, events: Json[]) =>
        call<{ results: { uid: string }[] }>(base, 'POST', `${envBase(t.env)}/error_groups:batchCapture`, {
          key: t.env.secretKey,
          body: { error_events: events },
        });
      const outcomes = batches.map((events) =>
        send(proxy.url, events).then(
          (r) => r,
          (err: unknown) => err as Error,
        ),
      );
      const accepted = () =>
        t.h
          .db('error_event_ids')
          .where({ env_id: t.env.env.id })
          .whereIn('event_id', ids)
          .count<{ n: string }[]>('* as n')
          .first()
          .then((r) => Number(r!.n));
      await eventually(async () => expect(await accepted()).toBeGreaterThanOrEqual(200));
      await victim.kill();
      const committedBeforeKill = await accepted();
      const results = await Promise.all(outcomes);
      expect(results.every((r) => r instanceof Error)).toBe(true);
      expect(committedBeforeKill).toBeGreaterThan(0);

      // The client retries every batch, same ids, on the surviving process.
      const uids: string[] = [];
      for (const events of batches) {
        const answer = await send(t.s.web.url, events);
        expect(answer.status).toBe(202);
        uids.push(...answer.body.results.map((x) => x.uid));
      }
      expect(new Set(uids).size).toBe(12 * 200);
      await eventually(async () => expect(await pending()).toBe(0), { timeoutMs: 60_000 });
      expect(await stored(uids)).toBe(12 * 200);
      expect(await accepted()).toBe(12 * 200);
    } finally {
      await proxy.close();
      await victim.stop();
    }
  });
});

describe('the SDK', () => {
  it('names every event and sends it again under the same name when the connection fails', async () => {
    let calls = 0;
    const bodies: string[] = [];
    const flaky: typeof fetch = async (input, init) => {
      calls += 1;
      bodies.push(String(init?.body));
      // The first attempt reaches the service, but its answer is lost on the way back.
      const res = await fetch(input, init);
      if (calls === 1) throw new TypeError('fetch failed: connection reset');
      return res;
    };
    const api = new ErrorGroupsApi(new CairnClient({ baseUrl: t.s.web.url, secretKey: t.env.secretKey, fetch: flaky }));
    const { uid } = await api.capture(t.env.env.name, {
      event_time: '2026-11-21T12:00:00Z',
      exception_type: 'Error',
      message: 'from the SDK',
    });
    expect(calls).toBe(2);
    expect(bodies[1]).toBe(bodies[0]);
    expect(JSON.parse(bodies[0]!).error_event.event_id).toMatch(/^[0-9a-f]{32}$/);
    await eventually(async () => expect(await pending()).toBe(0));
    expect(await stored([uid])).toBe(1);
  });
});
