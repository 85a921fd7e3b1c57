// Capture and batchCapture over HTTP (docs/api.md "Error tracking"): validation naming the field,
// body limits, uids, 202, the wildcard read after processing, and the scopes.
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/tenancy/envs.ts';
import { call } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { capture, envBase, groupIdOf, queuedEvents, readStored, sampleEvent, useStack } from './support.ts';

const t = useStack({}, { CAIRN_CELL: 'k7' });

const post = (path: string, body: unknown, key = t.env.secretKey) =>
  call(t.s.web.url, 'POST', `${envBase(t.env)}/error_groups${path}`, { key, body });

describe('capture', () => {
  it('accepts an event with 202 and a uid in the configured cell, readable once processed', async () => {
    const res = await post(':capture', { error_event: sampleEvent() });
    expect(res.status).toBe(202);
    expect(res.body.uid).toMatch(/^err_k7[0-9a-z]{26}$/);
    const stored = await readStored(t.s.web, t.env, res.body.uid as string);
    expect(stored.body).toMatchObject({
      uid: res.body.uid,
      exception_type: 'TypeError',
      service_name: 'api',
      event_time: '2026-11-21T12:00:00.000Z',
    });
    expect(stored.body.name).toMatch(
      new RegExp(`^${t.env.env.name}/error_groups/eg_[0-9a-z]{26}/error_events/${res.body.uid as string}$`),
    );
    const frames = stored.body.stack_frames as { function: string; in_app: boolean; unmapped_reason?: string }[];
    expect(frames.map((f) => f.function)).toEqual(['Layer.handle', 'handle', 'renderUser']);
    expect(frames.map((f) => f.in_app)).toEqual([false, true, true]);
    expect(frames[0]!.unmapped_reason).toBe('no_release');
    const group = await call(t.s.web.url, 'GET', `${envBase(t.env)}/error_groups/${groupIdOf(stored.body.name)}`, {
      key: t.env.secretKey,
    });
    expect(group.body).toMatchObject({
      state: 'unresolved',
      occurrence_count: 1,
      culprit: 'renderUser (/srv/app/src/users.js)',
      title: "TypeError: Cannot read properties of undefined (reading 'id')",
    });
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ['a missing event_time', { event_time: undefined }, 'body.error_event.event_time'],
    ['a local time without offset', { event_time: '2026-11-21T12:00:00' }, 'body.error_event.event_time'],
    ['a missing exception_type', { exception_type: undefined }, 'body.error_event.exception_type'],
    ['a short trace_id', { trace_id: 'abc' }, 'body.error_event.trace_id'],
    ['an all-zero trace_id', { trace_id: '0'.repeat(32) }, 'body.error_event.trace_id'],
    ['an upper-case span_id', { span_id: 'ABCDEF0123456789' }, 'body.error_event.span_id'],
    [
      '101 breadcrumbs',
      { breadcrumbs: Array.from({ length: 101 }, () => ({ message: 'x' })) },
      'body.error_event.breadcrumbs',
    ],
    [
      '65 tags',
      { tags: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`t${i}`, 'v'])) },
      'body.error_event.tags',
    ],
    ['a stack over 64 KiB', { stack: 'x'.repeat(64 * 1024 + 1) }, 'body.error_event.stack'],
    ['an unknown field', { colour: 'red' }, 'body.error_event'],
    [
      'a frame line of 0',
      { stack_frames: [{ function: 'f', file: 'a.js', line: 0 }] },
      'body.error_event.stack_frames.0.line',
    ],
  ];
  for (const [what, patch, field] of bad) {
    it(`refuses ${what}, naming the field`, async () => {
      const event = sampleEvent(patch);
      for (const [k, v] of Object.entries(patch)) if (v === undefined) delete event[k];
      const res = await post(':capture', { error_event: event });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_request');
      const fields = (res.body.details as { fields: { field: string }[] }).fields.map((f) => f.field);
      expect(fields.some((f) => f.startsWith(field))).toBe(true);
    });
  }

  it('answers 413 invalid_request for a body over 256 KiB', async () => {
    const res = await post(':capture', { error_event: sampleEvent({ message: 'x'.repeat(300 * 1024) }) });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('invalid_request');
  });

  it('needs observability:write', async () => {
    const narrow = await createKey(t.h.db, t.env.env, 'secret', ['observability:read']);
    const res = await post(':capture', { error_event: sampleEvent() }, narrow.token);
    expect(res).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  });
});

describe('batchCapture', () => {
  it('accepts the good events and refuses only the bad ones, in order', async () => {
    const events = [sampleEvent(), sampleEvent({ trace_id: 'nope' }), sampleEvent({ message: 'second' }), 42];
    const res = await post(':batchCapture', { error_events: events });
    expect(res.status).toBe(202);
    const results = res.body.results as ({ uid: string } | { error: { code: string; message: string } })[];
    expect(results).toHaveLength(4);
    expect(results[0]).toEqual({ uid: expect.stringMatching(/^err_k7/) });
    expect(results[1]).toMatchObject({
      error: { code: 'invalid_request', message: expect.stringContaining('error_events.1.trace_id') },
    });
    expect(results[2]).toEqual({ uid: expect.stringMatching(/^err_k7/) });
    expect(results[3]).toMatchObject({ error: { code: 'invalid_request' } });
    const second = await readStored(t.s.web, t.env, (results[2] as { uid: string }).uid);
    expect(second.body.message).toBe('second');
  });

  it('refuses more than 1000 events and an empty batch', async () => {
    expect(
      (await post(':batchCapture', { error_events: Array.from({ length: 1001 }, () => sampleEvent()) })).status,
    ).toBe(400);
    expect((await post(':batchCapture', { error_events: [] })).status).toBe(400);
  });

  it('stores nothing when the request fails: uids and jobs are written together', async () => {
    const before = (await queuedEvents(t.h)).length;
    const res = await post(':batchCapture', { error_events: 'not a list' });
    expect(res.status).toBe(400);
    const after = (await queuedEvents(t.h)).length;
    expect(after).toEqual(before);
  });

  it('stores nothing when one event of the body is not JSON, and says the body is not JSON', async () => {
    const before = (await queuedEvents(t.h)).length;
    const good = JSON.stringify(sampleEvent());
    for (const raw of [
      `{"error_events":[${good},${good.slice(0, -1)},${good}]}`,
      `{"error_events":[${good},{"__proto__":{"polluted":true}}]}`,
      `{"error_events":[${good},]}`,
    ]) {
      const res = await call(t.s.web.url, 'POST', `${envBase(t.env)}/error_groups:batchCapture`, {
        key: t.env.secretKey,
        rawBody: raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', message: 'the request body is not valid JSON' });
    }
    expect((await queuedEvents(t.h)).length).toEqual(before);
  });

  it('answers other shapes of body as the schema says, and reads a gzip body', async () => {
    const extra = await post(':batchCapture', { error_events: [sampleEvent()], extra: 1 });
    expect(extra.status).toBe(400);
    expect(JSON.stringify(extra.body)).toMatch(/extra/);
    const res = await fetch(`${t.s.web.url}${envBase(t.env)}/error_groups:batchCapture`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.env.secretKey}`,
        'content-type': 'application/json',
        'content-encoding': 'gzip',
      },
      body: gzipSync(JSON.stringify({ error_events: [sampleEvent({ message: 'zipped' }), { nope: 1 }] })),
    });
    expect(res.status).toBe(202);
    const body = (await res.json()) as { results: Record<string, unknown>[] };
    expect(body.results[0]).toMatchObject({ uid: expect.stringMatching(/^err_k7/) });
    expect(body.results[1]).toMatchObject({ error: { code: 'invalid_request' } });
  });

  it('accepts concurrent captures (sharing INSERTs) and stores every one, counted once', async () => {
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        post(':capture', { error_event: sampleEvent({ exception_type: 'ConcurrentError', message: `c${i}` }) }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(results.map(() => 202));
    const uids = results.map((r) => r.body.uid as string);
    expect(new Set(uids).size).toBe(120);
    await eventually(
      async () => Number((await t.h.db('error_events').whereIn('uid', uids).count({ n: '*' }).first())?.n) === 120,
    );
    const group = await t.h
      .db('error_groups')
      .where({ env_id: t.env.env.id })
      .whereLike('title', 'ConcurrentError%')
      .first('occurrence_count');
    expect(Number(group.occurrence_count)).toBe(120);
  });

  it('stores each large batch as it was sent when the bodies reuse the buffers of earlier ones', async () => {
    const crumbs = Array.from({ length: 20 }, (_, i) => ({ category: 'fetch', message: `${i} ${'x'.repeat(500)}` }));
    const batches = Array.from({ length: 4 }, (_, b) =>
      Array.from({ length: 120 }, (_, i) => sampleEvent({ message: `batch ${b} event ${i}`, breadcrumbs: crumbs })),
    );
    expect(JSON.stringify({ error_events: batches[0] }).length).toBeGreaterThan(1024 * 1024); // the pooled size
    // Two at a time: the second pair is read into the buffers the first pair gave back.
    const send = (events: unknown[]) => post(':batchCapture', { error_events: events });
    const answers = [
      ...(await Promise.all(batches.slice(0, 2).map(send))),
      ...(await Promise.all(batches.slice(2).map(send))),
    ];
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
    for (const [b, answer] of answers.entries()) {
      const uids = (answer.body.results as { uid: string }[]).map((r) => r.uid);
      expect(uids).toHaveLength(120);
      for (const i of [0, 59, 119]) {
        const stored = await readStored(t.s.web, t.env, uids[i]!);
        expect(stored.body.message).toBe(`batch ${b} event ${i}`);
      }
    }
  });

  it('uids are unique across a large batch', async () => {
    const res = await post(':batchCapture', {
      error_events: Array.from({ length: 500 }, (_, i) => sampleEvent({ message: `m${i}` })),
    });
    const uids = (res.body.results as { uid: string }[]).map((r) => r.uid);
    expect(new Set(uids).size).toBe(500);
    expect(await capture(t.s.web, t.env, sampleEvent())).toMatch(/^err_k7/);
  });
});
