// The key rule at any depth: events as three Sentry SDKs send them (golden fixtures, one per SDK),
// the rule on every kind of value, pair lists, JSON and form bodies sent as text, policies, an
// event nested far deeper than a call stack could walk, and a property: a secret under a sensitive
// key, anywhere in any object, never survives.
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPipelineCaches } from '../../src/domain/errors/pipeline/caches.ts';
import { unpackBody } from '../../src/domain/errors/pipeline/event-codec.ts';
import { processEvent } from '../../src/domain/errors/pipeline/process.ts';
import { fromSentryEvent } from '../../src/domain/errors/sentry/event.ts';
import { eventHeadSchema, scrubBySchema } from '../../src/domain/errors/scrubbing/schema.ts';
import {
  compilePolicy,
  createScrubber,
  defaultPolicy,
  type ScrubbingPolicy,
} from '../../src/domain/errors/scrubbing/scrub.ts';

const F = '[Filtered]';
const dir = new URL('./fixtures/nested-secrets/', import.meta.url);

describe('Sentry SDK events (golden fixtures)', () => {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const fixture = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as {
      sdk: string;
      event: Record<string, unknown>;
      expected: Record<string, unknown>;
    };
    it(`${file}: ${fixture.sdk}`, async () => {
      const out = await processEvent(fromSentryEvent(fixture.event, new Date('2026-11-28T12:00:00Z')), {
        maps: [],
        load: () => Promise.reject(new Error('no maps here')),
        policy: compilePolicy(defaultPolicy),
        caches: createPipelineCaches(),
      });
      const body = unpackBody(out.stored);
      const { tags, breadcrumbs, sentry, scrub_counts } = body;
      expect({ tags, breadcrumbs, sentry, scrub_counts }).toEqual(fixture.expected);
      // Every planted secret is gone, from the stored body as a whole.
      expect(JSON.stringify(body)).not.toContain('plant-');
    });
  }
});

describe('breadcrumb data', () => {
  it('are scrubbed whole, then cut to 4096 characters: the key of a long body is read, not cut off', async () => {
    const long = { notes: 'n'.repeat(4000), password: 'open sesame plant-long-password', after: 'a'.repeat(200) };
    const out = await processEvent(
      fromSentryEvent({ breadcrumbs: [{ category: 'xhr', data: { body: long } }] }, new Date('2026-11-28T12:00:00Z')),
      {
        maps: [],
        load: () => Promise.reject(new Error('no maps here')),
        policy: compilePolicy(defaultPolicy),
        caches: createPipelineCaches(),
      },
    );
    const body = unpackBody(out.stored).breadcrumbs[0]!.data!.body as string;
    expect(body).toHaveLength(4096);
    expect(body.startsWith(`{"notes":"nnn`)).toBe(true);
    expect(JSON.stringify(unpackBody(out.stored))).not.toContain('plant-');
  });
});

const scrub = (value: unknown, policy: ScrubbingPolicy = defaultPolicy) => {
  const s = createScrubber(policy);
  return { out: scrubBySchema(value, eventHeadSchema, s), counts: s.counts() };
};

describe('the key rule', () => {
  it('replaces a value of any type under a sensitive key at any depth, and keeps booleans, nulls and the rest', () => {
    const { out, counts } = scrub({
      sentry: {
        extra: {
          a: {
            b: [
              { c: { password: 'p', pin_hint: 'birthday', API_KEY: 12345, auth: { user: 'u', pass: 'p' } } },
              { secrets: ['x', 'y'], has_password: true, session: null },
            ],
          },
        },
      },
    });
    expect(out).toEqual({
      sentry: {
        extra: {
          a: {
            b: [
              { c: { password: F, pin_hint: 'birthday', API_KEY: F, auth: F } },
              { secrets: F, has_password: true, session: null },
            ],
          },
        },
      },
    });
    expect(counts).toEqual({ sensitive_key: 4 });
  });

  it('reads the keys of any field, named or not, the schema has no name for', () => {
    const { out } = scrub({
      message: 'login failed',
      tags: { route: '/login', 'session.id': 'abc' },
      sentry: {
        user: { id: '7', password: 'p' },
        contexts: { app: { api_key: 'k' }, trace: { trace_id: 'a'.repeat(32), data: { token: 't' } } },
        request: { data: { form: { passwd: 'p' } }, cookies: { theme: 'dark', 'connect.sid': 's' } },
        added_later: { deep: { private_key: 'k', n: 1 } },
      },
    });
    expect(out).toEqual({
      message: 'login failed',
      tags: { route: '/login', 'session.id': F },
      sentry: {
        user: { id: '7', password: F },
        contexts: { app: { api_key: F }, trace: { trace_id: 'a'.repeat(32), data: { token: F } } },
        // `cookies` is the protocol's field (kept); its members are the client's keys.
        request: { data: { form: { passwd: F } }, cookies: { theme: 'dark', 'connect.sid': F } },
        added_later: { deep: { private_key: F, n: 1 } },
      },
    });
  });

  it("keys an array of [name, value] pairs by each pair's name", () => {
    const { out } = scrub({
      sentry: {
        request: {
          query_string: [
            ['page', '2'],
            ['api_key', 'k'],
            ['Authorization', ['Token', 't']],
          ],
        },
      },
    });
    expect(out).toEqual({
      sentry: {
        request: {
          query_string: [
            ['page', '2'],
            ['api_key', F],
            ['Authorization', F],
          ],
        },
      },
    });
  });

  it('walks a string that is JSON as JSON, and leaves one that holds no secret as it was written', () => {
    const body = '{"user": "ann", "password": "correct horse battery staple", "nested": [{"token": 4}]}';
    const plain = '{ "user": "ann",\n  "page": 2 }';
    const { out, counts } = scrub({ sentry: { request: { data: body } }, breadcrumbs: [{ data: { plain } }] });
    expect(out).toEqual({
      sentry: { request: { data: `{"user":"ann","password":"${F}","nested":[{"token":"${F}"}]}` } },
      breadcrumbs: [{ data: { plain } }],
    });
    expect(counts).toEqual({ sensitive_key: 2 });
    // A name spelled with JSON escapes, and a policy's own key, are read too.
    expect(scrub({ message: '{"pass\\u0077ord": "x y"}' }).out).toEqual({ message: `{"password":"${F}"}` });
    expect(scrub({ message: '{"SSN": "1 2 3"}' }, { ...defaultPolicy, sensitive_keys: ['ssn'] }).out).toEqual({
      message: `{"SSN":"${F}"}`,
    });
    // Not JSON after all: scrubbed as text.
    expect(scrub({ message: '[object Object] password=hunter2' }).out).toEqual({
      message: `[object Object] password=${F}`,
    });
  });

  it('replaces the values of sensitive names in form bodies, query strings and Cookie headers', () => {
    const s = createScrubber(defaultPolicy);
    expect(s.text('username=ann&auth=tok&remember=on')).toBe(`username=ann&auth=${F}&remember=on`);
    expect(s.text('auth=tok&user=ann')).toBe(`auth=${F}&user=ann`);
    expect(s.text('theme=dark; connect.sid=s%3Aabc; PHPSESSID=xyz')).toBe(
      `theme=dark; connect.sid=${F}; PHPSESSID=${F}`,
    );
    expect(s.text('GET /cb?next=/a?session=abc&page=2')).toBe(`GET /cb?next=/a?session=${F}&page=2`);
    expect(s.text('user%5Bpassword%5D=x&user%5Bname%5D=ann')).toBe(`user%5Bpassword%5D=${F}&user%5Bname%5D=ann`);
    expect(s.text('compass=north&bypass=1&pass=x')).toBe(`compass=north&bypass=1&pass=${F}`);
    expect(s.counts()).toEqual({ query_secret: 7 });
  });

  it("takes the policy's own keys at any depth and in query strings, and none when `sensitive_key` is off", () => {
    const event = { sentry: { extra: { a: [{ ssn: '123-45-6789', password: 'p' }] }, request: { url: '/x?ssn=1' } } };
    expect(scrub(event, { ...defaultPolicy, sensitive_keys: ['SSN'] }).out).toEqual({
      sentry: { extra: { a: [{ ssn: F, password: F }] }, request: { url: `/x?ssn=${F}` } },
    });
    expect(scrub(event, { ...defaultPolicy, disabled_rules: ['sensitive_key'] }).out).toEqual(event);
  });

  it('walks an event nested far deeper than the call stack allows', () => {
    const depth = 50_000;
    let deep: Record<string, unknown> = { api_key: 'k', note: 'kept' };
    for (let i = 0; i < depth; i++) deep = { d: deep };
    const { out, counts } = scrub({ sentry: { extra: deep } });
    let at = (out as { sentry: { extra: Record<string, unknown> } }).sentry.extra;
    for (let i = 0; i < depth; i++) at = at.d as Record<string, unknown>;
    expect(at).toEqual({ api_key: F, note: 'kept' });
    expect(counts).toEqual({ sensitive_key: 1 });
  });

  it('keeps a `__proto__` member as a member', () => {
    const parsed = JSON.parse('{"__proto__": {"password": "p", "x": 1}}') as unknown;
    const { out } = scrub({ sentry: { extra: parsed } });
    const extra = (out as { sentry: { extra: object } }).sentry.extra;
    expect(Object.getPrototypeOf(extra)).toBe(Object.prototype);
    expect(JSON.stringify(extra)).toBe(`{"__proto__":{"password":"${F}","x":1}}`);
  });
});

// Names as the SDKs and frameworks spell them.
const sensitiveKeys = [
  'password',
  'PASSWORD',
  'passwd',
  'mysql_pwd',
  'secret',
  'client_secret',
  'api_key',
  'apiKey',
  'X-Api-Key',
  'auth',
  'Authorization',
  'credentials',
  'privateKey',
  'private_key',
  'token',
  'access_token',
  'session',
  'sessionid',
  'csrftoken',
  'connect.sid',
  'PHPSESSID',
  'Cookie',
  'set-cookie',
  'X-Forwarded-For',
];

// Where client data sits in a stored event; `json` puts the tree in as JSON text (a breadcrumb's nested data).
const places = ['extra', 'contexts', 'user', 'data', 'headers', 'cookies', 'added_later', 'tags', 'json'] as const;

function place(where: (typeof places)[number], tree: unknown): Record<string, unknown> {
  switch (where) {
    case 'data':
    case 'headers':
    case 'cookies':
      return { sentry: { request: { [where]: tree } } };
    case 'tags':
      return { tags: tree };
    case 'json':
      return { breadcrumbs: [{ category: 'http', data: { body: JSON.stringify(tree) } }] };
    default:
      return { sentry: { [where]: tree } };
  }
}

/** `tree` with `[key]: value` put in the object (or array) `path` leads to, or as a pair list there. */
function plant(tree: unknown, path: number[], key: string, value: unknown, asPair: boolean): unknown {
  const root: { v: unknown } = { v: structuredClone(tree) };
  let parent: Record<string | number, unknown> = root;
  let at: string | number = 'v';
  for (const step of path) {
    const here: unknown = parent[at];
    if (here === null || typeof here !== 'object') break;
    const keys = Object.keys(here);
    if (keys.length === 0) break;
    parent = here as Record<string | number, unknown>;
    at = Array.isArray(here) ? step % here.length : keys[step % keys.length]!;
  }
  const here: unknown = parent[at];
  const member = asPair
    ? {
        pairs: [
          ['page', '2'],
          [key, value],
        ],
      }
    : { [key]: value };
  if (Array.isArray(here)) here.push(member);
  else if (here !== null && typeof here === 'object') Object.assign(here, asPair ? { pairs: member.pairs } : member);
  else parent[at] = member;
  return root.v;
}

describe('property', () => {
  it('a secret under a sensitive key, at any path of any object-valued field, never survives', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 4 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.constantFrom(...sensitiveKeys),
        fc.constantFrom(...places),
        fc.constantFrom('string', 'number', 'object', 'array'),
        fc.boolean(),
        fc.integer({ min: 100_000, max: 999_999 }),
        (tree, path, key, where, kind, asPair, n) => {
          const secret = `plant-${n}-zq`;
          const value =
            kind === 'string'
              ? secret
              : kind === 'number'
                ? Number(`73914${n}`)
                : kind === 'object'
                  ? { note: secret }
                  : [secret, 1];
          const { out, counts } = scrub(place(where, plant(tree, path, key, value, asPair)));
          const json = JSON.stringify(out);
          expect(json).not.toContain(secret);
          expect(json).not.toContain(`73914${n}`);
          expect(counts.sensitive_key ?? 0).toBeGreaterThanOrEqual(1);
        },
      ),
      { numRuns: 500 },
    );
  });
});
