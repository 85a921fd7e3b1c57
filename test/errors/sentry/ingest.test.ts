// The Sentry ingest routes from outside, over HTTP (docs/api.md "Sentry compatibility"): every
// way a client authenticates, every answer a client can provoke (400, 401, 403, 413, 429), bodies
// as the SDKs send them (gzip, deflate, br, any Content-Type), CORS for browsers, non-event items
// dropped, and nothing queued for a refused request.
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../../src/domain/tenancy/envs.ts';
import { call, createTestEnv, sqlNumber } from '../../support/harness.ts';
import { eventually } from '../../support/probes.ts';
import { envBase, queuedEvents, useStack } from '../support.ts';
import { keyringFromConfig } from '../../../src/crypto.ts';
import { openPayload } from '../../../src/domain/errors/intake/sealed-payload.ts';

// No worker: these tests look at what is accepted (queued), not at processing.
const t = useStack({ worker: false });
let other: CreatedEnv;

beforeAll(async () => {
  other = await createTestEnv(t.h.db);
});

const key = (e: CreatedEnv = t.env) => e.clientKey.publicKey;
const n = (e: CreatedEnv = t.env) => e.clientKey.projectNumber;
const hex32 = () => crypto.randomUUID().replace(/-/g, '');

const sentryEvent = (id = hex32(), extra: Record<string, unknown> = {}) => ({
  event_id: id,
  timestamp: Date.now() / 1000,
  platform: 'javascript',
  exception: {
    values: [{ type: 'Error', value: 'boom', stacktrace: { frames: [{ filename: 'app.js', lineno: 1 }] } }],
  },
  ...extra,
});

function envelope(items: [Record<string, unknown>, string | Buffer][], headers: Record<string, unknown> = {}): Buffer {
  const parts: Buffer[] = [Buffer.from(JSON.stringify(headers))];
  for (const [h, payload] of items) parts.push(Buffer.from(`\n${JSON.stringify(h)}\n`), Buffer.from(payload));
  return Buffer.concat(parts);
}

const eventItem = (event: unknown): [Record<string, unknown>, string] => [{ type: 'event' }, JSON.stringify(event)];

async function post(
  path: string,
  body: Buffer | string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(`${t.s.web.url}${path}`, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const envelopePath = (e: CreatedEnv = t.env, query = `?sentry_key=${key(e)}&sentry_version=7`) =>
  `/api/${n(e)}/envelope/${query}`;

/** The SDK ids of the events queued for the environment (claimed only when stored: capture.ts `ClaimAt`). */
const acceptedIds = async (e: CreatedEnv = t.env) =>
  (await queuedEvents(t.h))
    .filter((r) => r.env_id === e.env.id)
    .map((r) => openPayload(keyringFromConfig(t.h.config), r).event_id);
const queued = () => sqlNumber(t.h.db, "select count(*) from pgboss.job where name = 'errors.ingest'");

describe('authentication', () => {
  it('takes the key from the query, X-Sentry-Auth, or the envelope header dsn', async () => {
    const [a, b, c] = [hex32(), hex32(), hex32()];
    expect((await post(envelopePath(), envelope([eventItem(sentryEvent(a))]))).body).toEqual({ id: a });
    const header = `Sentry sentry_version=7, sentry_client=sentry.python/2.0, sentry_key=${key()}`;
    expect(
      (await post(envelopePath(t.env, ''), envelope([eventItem(sentryEvent(b))]), { 'x-sentry-auth': header })).status,
    ).toBe(200);
    const dsn = `http://${key()}@example.com/${n()}`;
    expect((await post(envelopePath(t.env, ''), envelope([eventItem(sentryEvent(c))], { dsn }))).body).toEqual({
      id: c,
    });
    expect(await acceptedIds()).toEqual(expect.arrayContaining([a, b, c]));
  });

  it('answers 401 without a key or with an unknown one, 403 for another environment, and queues nothing', async () => {
    const before = await queued();
    const body = envelope([eventItem(sentryEvent())]);
    const none = await post(envelopePath(t.env, ''), body);
    expect(none.status).toBe(401);
    expect(none.body.message).toMatch(/sentry_key/);
    expect((await post(envelopePath(t.env, `?sentry_key=${'0'.repeat(32)}`), body)).status).toBe(401);
    expect((await post(envelopePath(t.env, '?sentry_key=not-hex'), body)).status).toBe(401);
    const wrong = await post(`/api/${n(other)}/envelope/?sentry_key=${key()}`, body);
    expect(wrong.status).toBe(403);
    expect(wrong.body.message).toContain(`belongs to project ${n()}`);
    expect((await post(`/api/${n()}/store/`, JSON.stringify(sentryEvent()))).status).toBe(401);
    expect(await queued()).toBe(before);
  });

  it('refuses a revoked key within 5 seconds', async () => {
    const made = await call<{ id: string; public_key: string; dsn: string }>(
      t.s.web.url,
      'POST',
      `${envBase(t.env)}/client_keys`,
      { key: t.env.secretKey, body: {} },
    );
    expect(made.status).toBe(201);
    const path = `/api/${n()}/envelope/?sentry_key=${made.body.public_key}`;
    expect((await post(path, envelope([eventItem(sentryEvent())]))).status).toBe(200);
    const revoked = await call(t.s.web.url, 'DELETE', `${envBase(t.env)}/client_keys/${made.body.id}`, {
      key: t.env.secretKey,
    });
    expect(revoked.status).toBe(200);
    const at = Date.now();
    await eventually(async () => (await post(path, envelope([eventItem(sentryEvent())]))).status === 401, {
      timeoutMs: 5000,
      intervalMs: 100,
    });
    expect(Date.now() - at).toBeLessThan(5000);
  });
});

describe('bodies', () => {
  it('reads gzip, deflate and br bodies under any Content-Type, and the store endpoint', async () => {
    const ids = [hex32(), hex32(), hex32(), hex32()];
    const body = (id: string) => envelope([eventItem(sentryEvent(id))]);
    const answers = await Promise.all([
      post(envelopePath(), gzipSync(body(ids[0]!)), {
        'content-encoding': 'gzip',
        'content-type': 'text/plain;charset=UTF-8',
      }),
      post(envelopePath(), deflateSync(body(ids[1]!)), { 'content-encoding': 'deflate' }),
      post(envelopePath(), brotliCompressSync(body(ids[2]!)), { 'content-encoding': 'br' }),
      post(`/api/${n()}/store/?sentry_key=${key()}`, gzipSync(JSON.stringify(sentryEvent(ids[3]))), {
        'content-encoding': 'gzip',
        'content-type': 'application/json',
      }),
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map((a) => a.body.id)).toEqual(ids);
    expect(await acceptedIds()).toEqual(expect.arrayContaining(ids));
  });

  it('answers 200 to envelopes without events and stores nothing for them', async () => {
    const before = await queued();
    const id = hex32();
    const items: [Record<string, unknown>, string][] = [
      [{ type: 'transaction' }, JSON.stringify({ event_id: hex32(), type: 'transaction' })],
      [{ type: 'session' }, JSON.stringify({ sid: hex32(), status: 'ok' })],
      [{ type: 'client_report' }, JSON.stringify({ discarded_events: [] })],
      [{ type: 'attachment', length: 5, filename: 'a.txt' }, 'hello'],
      [{ type: 'replay_recording' }, 'x'.repeat(10_000)],
    ];
    const res = await post(envelopePath(), envelope(items, { event_id: id }));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id });
    expect(await queued()).toBe(before);
  });

  it('answers 400 naming what broke, 413 past the limits, 415 for an unknown encoding', async () => {
    const before = await queued();
    const malformed = await post(envelopePath(), '{}\n{"type":"event","length":50}\n{}');
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/declares 50 bytes/),
    });
    const two = await post(envelopePath(), envelope([eventItem(sentryEvent()), eventItem(sentryEvent())]));
    expect(two.status).toBe(400);
    expect(two.body.message).toMatch(/more than one event item/);
    const notJson = await post(envelopePath(), envelope([[{ type: 'event' }, '{not json']]));
    expect(notJson.status).toBe(400);
    expect(notJson.body.message).toMatch(/payload of event item 1 is not JSON/);
    const notGzip = await post(envelopePath(), 'plain', { 'content-encoding': 'gzip' });
    expect(notGzip.status).toBe(400);
    expect((await post(envelopePath(), 'x', { 'content-encoding': 'zstd' })).status).toBe(415);

    const bigEvent = sentryEvent(hex32(), { extra: { blob: 'x'.repeat(1024 * 1024) } });
    const tooBigItem = await post(envelopePath(), envelope([eventItem(bigEvent)]));
    expect(tooBigItem.status).toBe(413);
    expect(tooBigItem.body.message).toMatch(/item 1 \(event\) is larger than 1048576 bytes/);
    // 101 MiB of zeros is 100 KiB of gzip: the decoded limit, not the wire one, refuses it.
    const bomb = gzipSync(
      Buffer.concat([Buffer.from('{}\n{"type":"attachment"}\n'), Buffer.alloc(101 * 1024 * 1024, 0x61)]),
    );
    const bombed = await post(envelopePath(), bomb, { 'content-encoding': 'gzip' });
    expect(bombed.status).toBe(413);
    expect(bombed.body.message).toMatch(/larger than 100 MiB decoded/);
    const wire = await post(envelopePath(), Buffer.alloc(21 * 1024 * 1024, 0x20));
    expect(wire.status).toBe(413);
    expect(await queued()).toBe(before);
  });

  it('answers any bytes with 200 or a 4xx, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            fc.constantFrom(
              '{}',
              '{"type":"event"}',
              '{"type":"event","length":3}',
              '\n',
              '{',
              '\u0000',
              '\ud800',
              '"',
            ),
            fc.string({ maxLength: 12 }),
            fc.json({ maxDepth: 2 }),
          ),
          { maxLength: 8 },
        ),
        async (parts) => {
          const res = await post(envelopePath(), parts.join(''));
          expect(
            res.status === 200 || (res.status >= 400 && res.status < 500),
            `${res.status} ${JSON.stringify(parts)}`,
          ).toBe(true);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('browsers and limits', () => {
  it('answers the preflight and exposes the rate-limit headers to pages', async () => {
    const pre = await fetch(`${t.s.web.url}${envelopePath()}`, {
      method: 'OPTIONS',
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/x-sentry-auth/i);
    const res = await post(envelopePath(), envelope([eventItem(sentryEvent())]), { origin: 'https://shop.example' });
    expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(res.headers.get('access-control-expose-headers')).toMatch(/X-Sentry-Rate-Limits/);
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    // The store endpoint, and both routes without their trailing slash, answer alike.
    const store = await post(`/api/${n()}/store?sentry_key=${key()}`, JSON.stringify(sentryEvent()), {
      origin: 'https://shop.example',
    });
    expect(store.status).toBe(200);
    expect(store.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    const bare = await post(`/api/${n()}/envelope?sentry_key=${key()}`, envelope([eventItem(sentryEvent())]));
    expect(bare.status).toBe(200);
  });

  it("holds a key to its own rate limit, shared by the web's requests, with X-Sentry-Rate-Limits", async () => {
    const made = await call<{ public_key: string; rate_limit: unknown }>(
      t.s.web.url,
      'POST',
      `${envBase(t.env)}/client_keys`,
      { key: t.env.secretKey, body: { rate_limit: { count: 3, window_seconds: 60 } } },
    );
    expect(made.body.rate_limit).toEqual({ count: 3, window_seconds: 60 });
    const path = `/api/${n()}/envelope/?sentry_key=${made.body.public_key}`;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => post(path, envelope([eventItem(sentryEvent())]))),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(3);
    const limited = answers.filter((a) => a.status === 429);
    expect(limited).toHaveLength(3);
    for (const l of limited) {
      expect(Number(l.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(l.headers.get('x-sentry-rate-limits')).toMatch(/^\d+:error:key$/);
    }
  });
});

describe('trace ids', () => {
  // SDKs put the trace in the envelope's header too (the dynamic sampling context); an event that
  // lacks `contexts.trace` keeps that one, and an event's own always wins.
  it("keeps the envelope header's trace for an event without contexts.trace, and the event's own over it", async () => {
    const [bare, own, dsc, mine] = [hex32(), hex32(), hex32(), hex32()];
    const header = (id: string) => ({ event_id: id, trace: { trace_id: dsc, public_key: key() } });
    expect((await post(envelopePath(), envelope([eventItem(sentryEvent(bare))], header(bare)))).status).toBe(200);
    const withOwn = sentryEvent(own, { contexts: { trace: { trace_id: mine, span_id: '851ba26bb5543c13' } } });
    expect((await post(envelopePath(), envelope([eventItem(withOwn)], header(own)))).status).toBe(200);
    // A malformed header trace is ignored, never a 400.
    const odd = hex32();
    const oddHeader = { event_id: odd, trace: { trace_id: 'not-hex' } };
    expect((await post(envelopePath(), envelope([eventItem(sentryEvent(odd))], oddHeader))).status).toBe(200);
    const traces = new Map(
      (await queuedEvents(t.h))
        .filter((r) => r.env_id === t.env.env.id)
        .map((r) => openPayload(keyringFromConfig(t.h.config), r))
        .map((p) => [p.event_id, p.trace_id]),
    );
    expect(traces.get(bare)).toBe(dsc);
    expect(traces.get(own)).toBe(mine);
    expect(traces.get(odd)).toBeUndefined();
  });
});
