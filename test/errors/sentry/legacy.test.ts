// Legacy Sentry payloads from outside, over HTTP, processed by the real worker and read back through
// the /v1 API: every `sentry.interfaces.*` alias stores the same event as its canonical key (relay's
// `legacy_alias`es), interface lists in each shape relay's `Values<T>` reads, raven-python's own
// requests (fixtures/raven, recorded from raven-python itself: base64 bodies, `sentry_secret`,
// numeric levels, `params`), the auth header forms raven clients send, and the raven body's refusals.
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../../src/domain/tenancy/envs.ts';
import { startWeb, type WebHandle } from '../../../src/server.ts';
import { createTestEnv, sqlNumber } from '../../support/harness.ts';
import { deadLetters, queuedEvents, readStored, useStack } from '../support.ts';

const t = useStack();
let web: WebHandle;
/** An environment that is only ever sent what is refused. */
let quiet: CreatedEnv;
const logLines: string[] = [];

beforeAll(async () => {
  // A second web process whose every log line (down to trace) is kept, to look for the secret in.
  const sink = new Writable({ write: (chunk: Buffer, _enc, done) => (logLines.push(chunk.toString()), done()) });
  web = await startWeb(t.h.config, { host: '127.0.0.1', port: 0, log: pino({ level: 'trace' }, sink) });
  quiet = await createTestEnv(t.h.db);
});
afterAll(async () => {
  await web?.stop();
});

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`fixtures/raven/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;
const hex32 = () => crypto.randomUUID().replace(/-/g, '');
const storePath = (e = t.env) => `/api/${e.clientKey.projectNumber}/store/`;
const authHeader = (e = t.env) =>
  `Sentry sentry_version=7, sentry_client=raven-js/1.1.22, sentry_key=${e.clientKey.publicKey}`;

async function store(body: Buffer | string, headers?: Record<string, string>, e = t.env) {
  headers ??= { 'x-sentry-auth': authHeader(e) };
  const res = await fetch(`${web.url}${storePath(e)}`, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

type Stored = Record<string, unknown>;
const read = async (id: string): Promise<Stored> => (await readStored<Stored>(t.s.web, t.env, id)).body;

/**
 * The environment's events queued, stored or dead-lettered: for `quiet`, which is sent only what is
 * refused, 0 whenever it is read, as a refusal answers before anything is queued.
 */
async function keptFor(e: CreatedEnv): Promise<number> {
  const mine = (rows: { env_id: string }[]) => rows.filter((r) => r.env_id === e.env.id).length;
  const stored = await sqlNumber(t.h.db, `select count(*) from error_events where env_id = '${e.env.id}'`);
  return mine(await queuedEvents(t.h)) + mine(await deadLetters(t.h)) + stored;
}

/** The stored event without what differs between any two events: names, ids and times. */
function comparable(e: Stored): Stored {
  const rest: Stored = {};
  for (const [k, v] of Object.entries(e)) if (!/(^|_)(name|uid|id|time|group)$|^meta$/.test(k)) rest[k] = v;
  return rest;
}

/** Stores `event` under a fresh id and reads it back once processed. */
async function storeAndRead(event: Record<string, unknown>): Promise<Stored> {
  const id = hex32();
  const res = await store(JSON.stringify({ event_id: id, timestamp: 1795687200, ...event }));
  expect(res, JSON.stringify(res.body)).toMatchObject({ status: 200, body: { id } });
  return read(id);
}

const frames = { frames: [{ abs_path: 'https://shop.example/app.js', function: 'buy', lineno: 3, colno: 7 }] };
const interfaces = {
  user: { id: '42', email: 'ann@example.com' },
  request: { url: 'https://shop.example/cart', method: 'POST', headers: { 'User-Agent': 'lolbrowser' } },
  contexts: { os: { name: 'Linux' }, runtime: { name: 'CPython', version: '2.7.18' } },
};
const crumb = { timestamp: 1795687199, category: 'ui.click', message: 'button#buy' };
const exception = { type: 'CheckoutError', value: 'could not place the order' };

describe('legacy interface names', () => {
  it('store the same error event as their canonical keys, in every shape relay reads', async () => {
    const canonical = await storeAndRead({
      exception: { values: [{ ...exception, stacktrace: frames }] },
      breadcrumbs: { values: [crumb] },
      ...interfaces,
    });
    expect(canonical).toMatchObject({ exception_type: 'CheckoutError', stack_frames: [{ function: 'buy' }] });
    const aliased = [
      // Every interface under its sentry.interfaces name; the exception one object, breadcrumbs an array.
      {
        'sentry.interfaces.Exception': { ...exception, 'sentry.interfaces.Stacktrace': frames },
        'sentry.interfaces.Breadcrumbs': [crumb],
        'sentry.interfaces.User': interfaces.user,
        'sentry.interfaces.Http': interfaces.request,
        'sentry.interfaces.Contexts': interfaces.contexts,
      },
      // raven-js 1.x: one exception beside an event-level stack, which is the exception's.
      {
        'sentry.interfaces.Exception': exception,
        'sentry.interfaces.Stacktrace': frames,
        breadcrumbs: { values: [crumb] },
        ...interfaces,
      },
      // The exception list bare, one breadcrumb as an object.
      { exception: [{ ...exception, stacktrace: frames }], breadcrumbs: crumb, ...interfaces },
    ];
    for (const event of aliased) expect(comparable(await storeAndRead(event))).toEqual(comparable(canonical));
  });

  it('store the same message event as logentry, with the event-level stack as its frames', async () => {
    const canonical = await storeAndRead({ logentry: { formatted: 'queue mail is full' }, stacktrace: frames });
    expect(canonical).toMatchObject({
      exception_type: 'Message',
      message: 'queue mail is full',
      stack_frames: [{ function: 'buy', file: 'https://shop.example/app.js', line: 3, column: 7 }],
    });
    for (const event of [
      { 'sentry.interfaces.Message': { message: 'queue %s is full', params: ['mail'] }, stacktrace: frames },
      { message: { message: 'queue %(name)s is full', params: { name: 'mail' } }, stacktrace: frames },
      { message: { formatted: 'queue mail is full' }, 'sentry.interfaces.Stacktrace': frames },
    ])
      expect(comparable(await storeAndRead(event))).toEqual(comparable(canonical));
  });

  it('give way to the canonical key when both are sent, and fill in what only an alias sends', async () => {
    const both = await storeAndRead({
      exception: { values: [{ ...exception, stacktrace: frames }] },
      'sentry.interfaces.Exception': { type: 'Other', value: 'not this one' },
      user: interfaces.user,
      'sentry.interfaces.User': { id: 'not this one' },
      'sentry.interfaces.Http': interfaces.request,
    });
    const canonical = await storeAndRead({
      exception: { values: [{ ...exception, stacktrace: frames }] },
      user: interfaces.user,
      request: interfaces.request,
    });
    expect(comparable(both)).toEqual(comparable(canonical));
    expect(JSON.stringify(both)).not.toContain('not this one');
  });

  it('store the raven-js 1.0.0 payload as its exception with its frames, request and user', async () => {
    const stored = await storeAndRead(fixture('raven-js-1.0.0.json').exception as Record<string, unknown>);
    expect(stored).toMatchObject({
      exception_type: 'Error',
      message: 'lol',
      stack_frames: [{ file: 'http://example.com/file1.js' }, { file: 'http://example.com/file2.js' }],
    });
    expect(JSON.stringify(stored)).toContain('lolbrowser');
    expect(JSON.stringify(stored)).toContain('"Matt"');
  });

  it('refuse a security report that is not an error event, storing nothing', async () => {
    const res = await store(
      JSON.stringify({ 'sentry.interfaces.Csp': { document_uri: 'https://shop.example/', blocked_uri: 'eval' } }),
      undefined,
      quiet,
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_request', details: { reason: 'security_report', report: 'csp' } });
    expect(await keptFor(quiet)).toBe(0);
  });
});

describe("raven-python's own requests", () => {
  const secret = 'fedcba9876543210fedcba9876543210';
  for (const name of ['raven-python-6.10.0.json', 'raven-python-5.x-base64.json'])
    it(`${name}: stored with frames and message, the sentry_secret nowhere`, async () => {
      const { requests } = fixture(name) as { requests: { headers: Record<string, string>; body_base64: string }[] };
      const ids: string[] = [];
      for (const r of requests) {
        const headers = { ...r.headers };
        headers['X-Sentry-Auth'] = headers['X-Sentry-Auth']!.replace(
          /sentry_key=\w+/,
          `sentry_key=${t.env.clientKey.publicKey}`,
        );
        expect(headers['X-Sentry-Auth']).toContain(`sentry_secret=${secret}`);
        const res = await fetch(`${web.url}${storePath()}`, {
          method: 'POST',
          headers,
          body: Buffer.from(r.body_base64, 'base64'),
        });
        const body = (await res.json()) as { id: string };
        expect(res.status, JSON.stringify(body)).toBe(200);
        ids.push(body.id);
      }
      const [error, message] = await Promise.all(ids.map(read));
      expect(error).toMatchObject({ exception_type: 'ValueError', message: 'card declined: 4111' });
      expect((error!.stack_frames as { function: string }[]).map((f) => f.function)).toEqual(['main', 'charge']);
      expect(message).toMatchObject({ exception_type: 'Message', message: "queue 'mail' is full" });
      const fns = (message!.stack_frames as { function: string }[]).map((f) => f.function);
      expect(fns).toContain('captureMessage');
      expect(JSON.stringify([error, message])).toContain('"error"'); // level 40 read as error
      expect(JSON.stringify([error, message])).not.toContain(secret);
      expect(logLines.length).toBeGreaterThan(0);
      expect(logLines.join('')).not.toContain(secret);
    });
});

describe('auth header forms', () => {
  it('reads the key from Authorization: Sentry, quoted values and loose spacing', async () => {
    const key = t.env.clientKey.publicKey;
    const forms: Record<string, string>[] = [
      { authorization: `Sentry sentry_key=${key}, sentry_secret=00ff, sentry_version=5` },
      { 'x-sentry-auth': `Sentry sentry_version=7,sentry_client="an-old-client/1.0",sentry_key="${key}"` },
      { 'x-sentry-auth': `sentry  sentry_timestamp = 1, sentry_key = ${key} ,sentry_secret = 00ff` },
    ];
    for (const headers of forms) {
      const id = hex32();
      const res = await store(JSON.stringify({ event_id: id, message: 'hello' }), headers);
      expect(res, JSON.stringify(headers)).toMatchObject({ status: 200, body: { id } });
    }
  });
});

/** raven-python's encode() before 5.6: base64.b64encode(zlib.compress(json)). */
const ravenEncode = (json: string | Buffer) => deflateSync(json).toString('base64');

describe('the raven body', () => {
  it('refuses bad base64, a bad zlib stream, too much inflated and too deep with 4xx, storing nothing', async () => {
    const deep = `{"extra":${'['.repeat(200)}${']'.repeat(200)}}`;
    const cases: [Buffer | string, number, RegExp][] = [
      ['eJ*not base64*', 400, /not valid base64/],
      [Buffer.from('xyz is not zlib').toString('base64'), 400, /not a zlib stream/],
      [
        ravenEncode(Buffer.concat([Buffer.from('{"extra":"'), Buffer.alloc(2 << 20, 97), Buffer.from('"}')])),
        413,
        /1 MiB/,
      ],
      [ravenEncode(deep), 400, /nested deeper than 128/],
    ];
    for (const [body, status, message] of cases) {
      const res = await store(body, undefined, quiet);
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      expect(JSON.stringify(res.body)).toMatch(message);
    }
    expect(await keptFor(quiet)).toBe(0);
  });

  it('any body answers as its JSON does, never 5xx', async () => {
    const legacyKeys = fc.constantFrom(
      'sentry.interfaces.Exception',
      'sentry.interfaces.Stacktrace',
      'sentry.interfaces.Message',
      'sentry.interfaces.Breadcrumbs',
      'sentry.interfaces.User',
      'sentry.interfaces.Http',
      'sentry.interfaces.Csp',
      'exception',
      'message',
      'breadcrumbs',
      'level',
    );
    const event = fc.dictionary(fc.oneof(legacyKeys, fc.string()), fc.jsonValue({ maxDepth: 4 }), { maxKeys: 6 });
    await fc.assert(
      fc.asyncProperty(event, async (e) => {
        const json = JSON.stringify(e);
        const plain = await store(json);
        const raven = await store(ravenEncode(json));
        expect(plain.status).toBeLessThan(500);
        expect(raven.status).toBe(plain.status);
      }),
      { numRuns: 60 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          fc.base64String().map((s) => `e${s}`),
        ),
        async (b) => {
          expect((await store(Buffer.from(b))).status).toBeLessThan(500);
        },
      ),
      { numRuns: 100 },
    );
  });
});
