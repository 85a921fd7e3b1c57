// Searching and sorting error groups over HTTP (docs/api.md "Search"), on events captured through
// the API and a Sentry SDK's store route and stored by the real worker: every term, negation and
// quoting, each order paged through to its end, page tokens bound to their list, user_count, and
// a refused search naming its term. Another environment's groups never show.
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { call, createTestEnv } from '../support/harness.ts';
import { capture, envBase, groupIdOf, readStored, sampleEvent, useStack } from './support.ts';

type Group = { uid: string; title: string; culprit: string; occurrence_count: number; user_count: number };
type List = { error_groups: Group[]; next_page_token?: string };

const t = useStack();
let other: CreatedEnv;
/** The four groups' ids, by the name the tests give them. */
const ids: Record<'a' | 'b' | 'c' | 'd', string> = { a: '', b: '', c: '', d: '' };

const stack = (type: string, message: string, fn: string, file: string) =>
  `${type}: ${message}\n    at ${fn} (/srv/app/src/${file}:3:9)\n    at handle (/srv/app/src/server.js:42:7)`;

const cairnEvent = (fp: string, time: string, o: Record<string, unknown>) =>
  sampleEvent({ fingerprint: fp, event_time: time, ...o });

const sentryEvent = (fp: string, time: string, o: Record<string, unknown>) => ({
  event_id: crypto.randomUUID().replace(/-/g, ''),
  timestamp: time,
  platform: 'javascript',
  fingerprint: [fp],
  exception: {
    values: [
      {
        type: 'CheckoutError',
        value: 'coupon "SPRING" is unknown',
        stacktrace: {
          frames: [{ function: 'applyCoupon', filename: '/srv/app/src/checkout.js', lineno: 4, in_app: true }],
        },
      },
    ],
  },
  ...o,
});

/** Captures with the secret key, or through a Sentry SDK's store route with the client key; answers the stored group. */
async function store(env: CreatedEnv, event: Record<string, unknown>, sentry = false): Promise<string> {
  if (!sentry) return groupIdOf((await readStored(t.s.web, env, await capture(t.s.web, env, event))).body.name);
  const res = await fetch(
    `${t.s.web.url}/api/${env.clientKey.projectNumber}/store/?sentry_key=${env.clientKey.publicKey}`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(event),
    },
  );
  expect(res.status).toBe(200);
  return groupIdOf((await readStored(t.s.web, env, String(event.event_id))).body.name);
}

const list = (query: Record<string, string>, env: CreatedEnv = t.env) =>
  call<List & { code?: string; message?: string; details?: Record<string, unknown> }>(
    t.s.web.url,
    'GET',
    `${envBase(env)}/error_groups?${new URLSearchParams(query)}`,
    { key: env.secretKey },
  );

/** The groups a search finds, by name, in the order answered. */
async function found(q: string, extra: Record<string, string> = {}): Promise<string[]> {
  const res = await list({ q, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const name = Object.fromEntries(Object.entries(ids).map(([k, v]) => [v, k]));
  return res.body.error_groups.map((g) => name[g.uid] ?? g.uid);
}

beforeAll(async () => {
  const env = t.env;
  other = await createTestEnv(t.h.db);
  // Addresses are scrubbed by default (docs/api.md "[Filtered]"), and a scrubbed one names no user:
  // this environment keeps them, as a service that knows its users by email may choose to.
  const policy = await call(t.s.web.url, 'PUT', `${envBase(env)}/scrubbing_policy`, {
    key: env.secretKey,
    body: { policy: { disabled_rules: ['email'] } },
  });
  expect(policy.status).toBe(200);
  const a = (time: string, release: string) =>
    cairnEvent('search-a', time, {
      release,
      tags: { browser: 'Chrome', tenant: 'acme' },
    });
  ids.a = await store(env, a('2026-11-20T10:00:00Z', 'shop@1.0.0'));
  await store(env, a('2026-11-21T10:00:00Z', 'shop@1.1.0'));
  await store(env, a('2026-11-22T10:00:00Z', 'shop@1.1.0'));
  ids.b = await store(
    env,
    cairnEvent('search-b', '2026-11-21T11:00:00Z', {
      exception_type: 'RangeError',
      message: 'Invalid array length 50%_off',
      stack: stack('RangeError', 'Invalid array length 50%_off', 'invoice', 'billing.js'),
      service_name: 'billing',
      release: 'shop@1.1.0',
      tags: { browser: 'Mobile Safari', tenant: 'globex' },
    }),
  );
  const c = (time: string, user: Record<string, string>) =>
    sentryEvent('search-c', time, { level: 'warning', release: 'shop@2.0.0', user });
  ids.c = await store(env, c('2026-11-19T10:00:00Z', { id: '42', email: 'Ada@Example.com' }), true);
  await store(env, c('2026-11-23T10:00:00Z', { email: 'bob@example.com' }), true);
  ids.d = await store(
    env,
    sentryEvent('search-d', '2026-11-24T10:00:00Z', { level: 'error', user: { id: '7' } }),
    true,
  );
  // Another environment's group carries every value searched for.
  await store(other, a('2026-11-25T10:00:00Z', 'shop@1.1.0'));
}, 120_000);

describe('search terms', () => {
  it('a word or a quoted phrase is looked for in the type, message and culprit, in any case', async () => {
    expect(await found('TypeError')).toEqual(['a']);
    expect(await found('typeerror PROPERTIES')).toEqual(['a']);
    expect(await found('"invalid ARRAY length"')).toEqual(['b']);
    expect(await found('invoice')).toEqual(['b']);
    expect(await found('applyCoupon')).toEqual(['d', 'c']);
    expect(await found('"coupon \\"SPRING\\" is"')).toEqual(['d', 'c']);
    expect(await found('"SPRING" nothing')).toEqual([]);
  });

  it('takes %, _ and \\ in text literally', async () => {
    expect(await found('0%_o')).toEqual(['b']);
    expect(await found('0__o')).toEqual([]);
    expect(await found('%')).toEqual(['b']);
    expect(await found('"\\\\"')).toEqual([]);
  });

  it('is: filters by state, alone or beside the state parameter; ! negates it', async () => {
    const path = `${envBase(t.env)}/error_groups/${ids.b}`;
    const triage = async (action: string) => {
      const read = await call<{ etag: string }>(t.s.web.url, 'GET', path, { key: t.env.secretKey });
      const res = await call(t.s.web.url, 'POST', `${path}:${action}`, {
        key: t.env.secretKey,
        body: { etag: read.body.etag },
      });
      expect(res.status).toBe(200);
    };
    await triage('resolve');
    try {
      expect(await found('is:resolved')).toEqual(['b']);
      expect(await found('!is:resolved')).toEqual(['d', 'c', 'a']);
      expect(await found('is:unresolved', { state: 'resolved' })).toEqual([]);
      expect(await found('is:resolved', { state: 'resolved' })).toEqual(['b']);
    } finally {
      await triage('reopen');
    }
    expect(await found('is:unresolved')).toEqual(['d', 'c', 'a', 'b']);
  });

  it('service: and first_release: read the group; release: any of its events', async () => {
    expect(await found('service:api')).toEqual(['a']);
    expect(await found('!service:api')).toEqual(['d', 'c', 'b']);
    expect(await found('release:shop@1.0.0')).toEqual(['a']);
    expect(await found('release:shop@1.1.0')).toEqual(['a', 'b']);
    expect(await found('release:"shop@2.0.0"')).toEqual(['c']);
    expect(await found('!release:shop@1.1.0')).toEqual(['d', 'c']);
    expect(await found('first_release:shop@1.0.0')).toEqual(['a']);
    expect(await found('first_release:shop@1.1.0')).toEqual(['b']);
    expect(await found('!first_release:shop@1.0.0')).toEqual(['d', 'c', 'b']);
    // d's first event named no release: negating any release keeps it.
    expect(await found('!first_release:shop@1.1.0 !first_release:shop@2.0.0')).toEqual(['d', 'a']);
  });

  it('level:, user: (an id, or an email in any case) and tags, each negated by !', async () => {
    expect(await found('level:warning')).toEqual(['c']);
    expect(await found('!level:warning')).toEqual(['d', 'a', 'b']);
    expect(await found('user:42')).toEqual(['c']);
    expect(await found('user:ada@EXAMPLE.com')).toEqual(['c']);
    expect(await found('user:7')).toEqual(['d']);
    expect(await found('!user:7 !user:42')).toEqual(['a', 'b']);
    expect(await found('browser:Chrome')).toEqual(['a']);
    expect(await found('browser:chrome')).toEqual([]);
    expect(await found('browser:"Mobile Safari"')).toEqual(['b']);
    expect(await found('!tenant:acme')).toEqual(['d', 'c', 'b']);
    expect(await found('release:shop@1.1.0 !browser:Chrome tenant:globex Invalid')).toEqual(['b']);
  });

  it('never reads another environment', async () => {
    const mine = await found('browser:Chrome release:shop@1.1.0');
    expect(mine).toEqual(['a']);
    const theirs = await list({ q: 'browser:Chrome' }, other);
    expect(theirs.body.error_groups).toHaveLength(1);
    expect(theirs.body.error_groups[0]!.uid).not.toBe(ids.a);
  });

  it('refuses a bad search with 400 invalid_request naming the term and query.q', async () => {
    for (const [q, term] of [
      ['TypeError browser:', 'browser:'],
      ['is:open', 'is:open'],
      ['"unclosed', '"unclosed'],
      ['!word', '!word'],
    ] as const) {
      const res = await list({ q });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', details: { field: 'query.q', term } });
      expect(res.body.message).toContain(JSON.stringify(term));
    }
    const long = await list({ q: 'x '.repeat(21) });
    expect(long.status).toBe(400);
    expect(long.body.message).toContain('at most 20 terms');
    const big = await list({ q: 'x'.repeat(1025) });
    expect(big.status).toBe(400);
    expect(big.body).toMatchObject({ details: { field: 'query.q' }, message: expect.stringContaining('1025 bytes') });
  });
});

describe('sort orders and paging', () => {
  /** Every group of a list, one a page, following next_page_token to the end. */
  async function pages(query: Record<string, string>): Promise<string[]> {
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const res = await list({ ...query, page_size: '1', ...(token ? { page_token: token } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      seen.push(...res.body.error_groups.map((g) => g.uid));
      token = res.body.next_page_token;
    } while (token && seen.length < 10);
    return seen;
  }
  const byIdDesc = (...names: ('a' | 'b' | 'c' | 'd')[]) =>
    names
      .map((n) => ids[n])
      .sort()
      .reverse();

  it('last_seen (the default) and first_seen: newest first', async () => {
    const lastSeen = [ids.d, ids.c, ids.a, ids.b];
    expect(await pages({})).toEqual(lastSeen);
    expect(await pages({ sort: 'last_seen' })).toEqual(lastSeen);
    expect(await pages({ sort: 'first_seen' })).toEqual([ids.d, ids.b, ids.a, ids.c]);
  });

  it('events and users: most first, ties newest id first; user_count counts distinct users', async () => {
    expect(await pages({ sort: 'events' })).toEqual([ids.a, ids.c, ...byIdDesc('b', 'd')]);
    expect(await pages({ sort: 'users' })).toEqual([ids.c, ids.d, ...byIdDesc('a', 'b')]);
    const all = (await list({})).body.error_groups;
    const count = (id: string) => all.find((g) => g.uid === id)!;
    expect([ids.a, ids.b, ids.c, ids.d].map((id) => count(id).user_count)).toEqual([0, 0, 2, 1]);
    expect(count(ids.a).occurrence_count).toBe(3);
  });

  it('pages a search in its order', async () => {
    expect(await pages({ q: 'release:shop@1.1.0', sort: 'first_seen' })).toEqual([ids.b, ids.a]);
    expect(await pages({ q: '!service:api', sort: 'users' })).toEqual([ids.c, ids.d, ids.b]);
  });

  it("binds a token to its search, order and state: another list's is refused", async () => {
    const first = await list({ q: 'is:unresolved', sort: 'events', page_size: '1' });
    const token = first.body.next_page_token!;
    expect(token).toBeDefined();
    const again = await list({ q: '  is:unresolved ', sort: 'events', page_size: '1', page_token: token });
    expect(again.status).toBe(200);
    expect(again.body.error_groups[0]!.uid).toBe(ids.c);
    const lists: Record<string, string>[] = [
      { q: 'is:unresolved', sort: 'users' },
      { q: 'is:unresolved', sort: 'events', state: 'unresolved' },
      { q: '!is:resolved', sort: 'events' },
      { sort: 'events' },
    ];
    for (const changed of lists) {
      const res = await list({ ...changed, page_size: '1', page_token: token });
      expect(res.status, JSON.stringify(changed)).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('page_token') });
    }
  });

  it('refuses an unknown sort', async () => {
    const res = await list({ sort: 'oldest' });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('query.sort');
  });
});

describe('the OpenAPI document', () => {
  it('describes q and sort with examples, and user_count on ErrorGroup', async () => {
    const res = await call<{
      paths: Record<
        string,
        { get?: { parameters: { name: string; description?: string; example?: unknown; schema: unknown }[] } }
      >;
      components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> };
    }>(t.s.web.url, 'GET', '/v1/openapi.json');
    const params = res.body.paths['/v1/orgs/{org}/projects/{project}/envs/{env}/error_groups']!.get!.parameters;
    const q = params.find((p) => p.name === 'q')!;
    expect(q.description).toContain('!key:value negates');
    expect(JSON.stringify(q)).toContain('browser:\\"Mobile Safari\\"');
    const sort = params.find((p) => p.name === 'sort')!;
    expect(sort.description).toContain('most users first');
    expect(JSON.stringify(sort.schema)).toContain('first_seen');
    expect(res.body.components.schemas.ErrorGroup!.properties.user_count).toMatchObject({ type: 'integer' });
    expect(res.body.components.schemas.ErrorGroup!.required).toContain('user_count');
  });
});
