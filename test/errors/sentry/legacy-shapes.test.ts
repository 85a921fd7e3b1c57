// The pure parts of reading legacy Sentry payloads, golden: readLegacyEvent (legacy.ts) on the
// payloads raven-js 1.0.0's and raven-python's own code produced (fixtures/raven), the auth header
// forms raven clients send (auth.ts), and the raven body (raven-body.ts).
import { readFileSync } from 'node:fs';
import { deflateSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { keyFromAuthHeader, parseAuthHeader, sentryAuthHeader } from '../../../src/http/middleware/client-key.ts';
import { eventLevel } from '../../../src/domain/errors/sentry/level.ts';
import { readLegacyEvent } from '../../../src/domain/errors/sentry/legacy.ts';
import { inflateRavenBody, isRavenBody } from '../../../src/domain/errors/sentry/raven-body.ts';

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`fixtures/raven/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;

describe('readLegacyEvent', () => {
  it('reads the raven-js 1.0.0 payload under the canonical keys, the stack in its one exception', () => {
    const event = fixture('raven-js-1.0.0.json').exception as Record<string, unknown>;
    expect(readLegacyEvent(structuredClone(event))).toEqual({
      project: 2,
      logger: 'javascript',
      site: 'THE BEST',
      platform: 'javascript',
      request: { url: 'http://localhost/?a=b', headers: { 'User-Agent': 'lolbrowser' } },
      user: { name: 'Matt' },
      exception: {
        values: [
          {
            type: 'Error',
            value: 'lol',
            stacktrace: {
              frames: [{ filename: 'http://example.com/file1.js' }, { filename: 'http://example.com/file2.js' }],
            },
          },
        ],
      },
      culprit: 'http://example.com/override.js',
      message: 'lol at 10',
    });
  });

  it("reads raven-python's message: logentry formatted from its params, the level named", () => {
    const { requests } = fixture('raven-python-5.x-base64.json') as { requests: { body_base64: string }[] };
    const body = Buffer.from(Buffer.from(requests[1]!.body_base64, 'base64').toString(), 'base64');
    const event = readLegacyEvent(JSON.parse(inflateSync(body).toString()) as Record<string, unknown>);
    expect(event.logentry).toEqual({
      message: 'queue %s is full',
      params: ["'mail'"],
      formatted: "queue 'mail' is full",
    });
    expect(event['sentry.interfaces.Message']).toBeUndefined();
    expect(eventLevel(event.level)).toBe('error');
    expect((event.stacktrace as { frames: unknown[] }).frames.length).toBeGreaterThan(1);
  });

  it("moves an event-level stack into the one exception, replacing the exception's own (relay's rule)", () => {
    const eventStack = { frames: [{ filename: 'app.js', function: 'outer' }] };
    const event = readLegacyEvent({
      exception: [{ type: 'E', value: 'x', stacktrace: { frames: [{ filename: 'old.js' }] } }],
      stacktrace: eventStack,
    });
    expect(event).toEqual({ exception: { values: [{ type: 'E', value: 'x', stacktrace: eventStack }] } });
    const two = readLegacyEvent({ exception: [{ type: 'A' }, { type: 'B' }], stacktrace: eventStack });
    expect(two.stacktrace).toEqual(eventStack);
  });

  it('keeps the canonical key over its alias, and reads Values in its three shapes', () => {
    expect(
      readLegacyEvent({
        user: { id: 'a' },
        'sentry.interfaces.User': { id: 'b' },
        'sentry.interfaces.Exception': [{ type: 'E' }],
        'sentry.interfaces.Breadcrumbs': { message: 'one' },
        'sentry.interfaces.Template': { filename: 'x.html' },
      }),
    ).toEqual({
      user: { id: 'a' },
      exception: { values: [{ type: 'E' }] },
      breadcrumbs: { values: [{ message: 'one' }] },
      template: { filename: 'x.html' },
    });
  });

  it('formats %-placeholders as Python does, and leaves a message whose params are missing', () => {
    const entry = (message: string, params: unknown) =>
      (readLegacyEvent({ logentry: { message, params } }).logentry as { formatted?: string }).formatted;
    expect(entry('%d%% of %s (%(x)s)', [5, 'disk'])).toBeUndefined();
    expect(entry('%d%% of %s', [5, 'disk'])).toBe('5% of disk');
    expect(entry('%(who)s left %(n)d', { who: 'ann', n: 3 })).toBe('ann left 3');
    expect(entry('%s and %s', ['one'])).toBeUndefined();
  });

  it('formats at most the message limit, however often a large param is named', () => {
    const started = performance.now();
    const big = { message: '%(x)s'.repeat(100_000), params: { x: { y: 'a'.repeat(100_000) } } };
    const { formatted } = readLegacyEvent({ logentry: big }).logentry as { formatted: string };
    expect(formatted).toHaveLength(8192);
    expect(formatted.startsWith('{"y":"aaa')).toBe(true);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('refuses a lone security report, and drops one beside an error', () => {
    expect(() => readLegacyEvent({ 'sentry.interfaces.ExpectCT': { hostname: 'a' } })).toThrow(
      /expectct security report/,
    );
    expect(readLegacyEvent({ message: 'm', hpkp: { hostname: 'a' } })).toEqual({ message: 'm' });
  });
});

describe('the auth header', () => {
  const key = '0123456789abcdef0123456789abcdef';
  it('reads the forms raven clients send', () => {
    const raven = `Sentry sentry_timestamp=1795841343.9, sentry_client=raven-python/6.10.0, sentry_version=6, sentry_key=${key}, sentry_secret=fedcba`;
    expect(parseAuthHeader(raven)).toEqual({
      sentry_timestamp: '1795841343.9',
      sentry_client: 'raven-python/6.10.0',
      sentry_version: '6',
      sentry_key: key,
      sentry_secret: 'fedcba',
    });
    for (const h of [
      `Sentry sentry_key=${key}`,
      `sentry sentry_version=7,sentry_key=${key}`,
      `SENTRY  sentry_key = ${key} , sentry_version = 7`,
      `sentry_key=${key}, sentry_version=7`,
      `Sentry sentry_client="an-old-client/1.0", sentry_key="${key}"`,
      `Sentry sentry_key=${key} sentry_version=7`,
      `Sentry sentry_client="a client/1.0" sentry_key=${key}`,
    ])
      expect(keyFromAuthHeader(h), h).toBe(key);
    expect(keyFromAuthHeader('Sentry sentry_version=7')).toBeUndefined();
    expect(keyFromAuthHeader(undefined)).toBeUndefined();
  });

  it('takes X-Sentry-Auth, else an Authorization of scheme Sentry', () => {
    const get = (h: Record<string, string>) => (name: string) => h[name] ?? '';
    expect(sentryAuthHeader(get({ 'x-sentry-auth': 'a', authorization: 'Sentry b' }))).toBe('a');
    expect(sentryAuthHeader(get({ authorization: 'Sentry sentry_key=b' }))).toBe('Sentry sentry_key=b');
    expect(sentryAuthHeader(get({ authorization: 'Bearer cairn_sk_x' }))).toBeUndefined();
  });
});

describe('the raven body', () => {
  it('is told from JSON by its first byte, and inflates within the limit', async () => {
    const json = '{"message":"hello"}';
    const body = Buffer.from(deflateSync(json).toString('base64'));
    expect(isRavenBody(body)).toBe(true);
    expect(isRavenBody(Buffer.from(` \n${json}`))).toBe(false);
    expect(isRavenBody(Buffer.from('  '))).toBe(false);
    expect((await inflateRavenBody(body, 1024)).toString()).toBe(json);
    await expect(inflateRavenBody(body, 8)).rejects.toMatchObject({ status: 413 });
    await expect(inflateRavenBody(Buffer.from('eJ==x'), 1024)).rejects.toMatchObject({
      status: 400,
      details: { reason: 'bad_raven_body' },
    });
  });
});

describe('eventLevel', () => {
  it.each([
    ['error', 'error'],
    ['warning', 'warning'],
    ['log', 'info'],
    ['critical', 'fatal'],
    [40, 'error'],
    [10, 'debug'],
    ['warn', undefined],
    ['ERROR', undefined],
    ['x'.repeat(200), undefined],
    ['constructor', undefined],
    [41, undefined],
  ])('%s → %s', (level, want) => expect(eventLevel(level)).toBe(want));
});
