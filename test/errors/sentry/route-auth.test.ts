// The Sentry ingest routes' client key is the route's own auth (`auth: 'client-key'`, the kernel's
// client-key.ts), over HTTP against the real web: every place a key may be is taken, a key in the
// query or header is checked before any of the body is read (a bad key answers 401/403 to a body
// that would be a 400), the path is validated before the key (400 for a malformed project id,
// whatever the key), a key named only in an envelope's `dsn` header is checked once that line is
// read, and the OpenAPI document names the client key's schemes.
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../../src/domain/tenancy/envs.ts';
import { keyringFromConfig } from '../../../src/crypto.ts';
import { openPayload } from '../../../src/domain/errors/intake/sealed-payload.ts';
import { call, createTestEnv, sqlNumber, useWeb } from '../../support/harness.ts';
import { queuedEvents } from '../support.ts';

const stack = useWeb();
let env: CreatedEnv;
let other: CreatedEnv;
beforeAll(async () => {
  env = await createTestEnv(stack.h.db);
  other = await createTestEnv(stack.h.db);
});

const key = (e: CreatedEnv = env) => e.clientKey.publicKey;
const n = (e: CreatedEnv = env) => e.clientKey.projectNumber;
const hex32 = () => crypto.randomUUID().replace(/-/g, '');
const unknownKey = 'f'.repeat(32);
const dsnOf = (publicKey: string, e: CreatedEnv = env) => `http://${publicKey}@example.com/${n(e)}`;
const sentryAuth = (publicKey: string) => `Sentry sentry_version=7, sentry_client=test/1.0, sentry_key=${publicKey}`;

const event = (id: string) => ({ event_id: id, platform: 'javascript', message: 'route auth' });
const envelope = (id: string, headers: Record<string, unknown> = {}) =>
  `${JSON.stringify(headers)}\n{"type":"event"}\n${JSON.stringify(event(id))}`;
/** An envelope whose first line is whole and whose item is not: a 400 once it is read past that line. */
const brokenAfterHead = (headers: Record<string, unknown> = {}) =>
  `${JSON.stringify(headers)}\n{"type":"event","length":50}\n{}`;

async function post(path: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.web.url}${path}`, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

const acceptedIds = async (e: CreatedEnv) =>
  (await queuedEvents(stack.h))
    .filter((r) => r.env_id === e.env.id)
    .map((r) => openPayload(keyringFromConfig(stack.h.config), r).event_id);
const queued = () => sqlNumber(stack.h.db, "select count(*) from pgboss.job where name = 'errors.ingest'");

describe("the client key, checked by the Sentry routes' auth", () => {
  it('takes it from sentry_key, X-Sentry-Auth, Authorization: Sentry, or an envelope dsn', async () => {
    const ids = Array.from({ length: 6 }, hex32);
    const answers = [
      await post(`/api/${n()}/envelope/?sentry_key=${key()}`, envelope(ids[0]!)),
      await post(`/api/${n()}/envelope/`, envelope(ids[1]!), { 'x-sentry-auth': sentryAuth(key()) }),
      await post(`/api/${n()}/envelope/`, envelope(ids[2]!), { authorization: sentryAuth(key()) }),
      await post(`/api/${n()}/envelope/`, envelope(ids[3]!, { dsn: dsnOf(key()) })),
      await post(`/api/${n()}/store/?sentry_key=${key()}`, JSON.stringify(event(ids[4]!))),
      await post(`/api/${n()}/store/`, JSON.stringify(event(ids[5]!)), { 'x-sentry-auth': sentryAuth(key()) }),
    ];
    expect(answers.map((a) => [a.status, a.body.id])).toEqual(ids.map((id) => [200, id]));
    expect(await acceptedIds(env)).toEqual(expect.arrayContaining(ids));
  });

  it('checks a query or header key before the body: 401 or 403 where the body alone is a 400', async () => {
    const before = await queued();
    const broken = brokenAfterHead();
    // With a good key the body is read, and refused for what it is.
    expect((await post(`/api/${n()}/envelope/?sentry_key=${key()}`, broken)).status).toBe(400);
    const unknown = await post(`/api/${n()}/envelope/?sentry_key=${unknownKey}`, broken);
    expect(unknown).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    const across = await post(`/api/${n(other)}/envelope/`, broken, { 'x-sentry-auth': sentryAuth(key()) });
    expect(across).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect(across.body.message).toContain(`belongs to project ${n()}`);
    const store = await post(`/api/${n()}/store/`, '{not json');
    expect(store).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(store.body.message).toMatch(/sentry_key/);
    expect((await post(`/api/${n()}/store/`, '{not json', { authorization: sentryAuth('not-hex') })).status).toBe(401);
    expect(await queued()).toBe(before);
  });

  it('validates the path and query before the key: 400 whatever key comes, or none', async () => {
    const body = envelope(hex32());
    for (const [path, headers] of [
      ['/api/abc/envelope/', {}],
      [`/api/0/envelope/?sentry_key=${key()}`, {}],
      [`/api/0${n()}/store/`, { 'x-sentry-auth': sentryAuth(key(other)) }],
      [`/api/${n()}/envelope/?sentry_key=${'a'.repeat(129)}`, {}],
    ] as const) {
      const res = await post(path, body, headers);
      expect([path, res.status, res.body.code]).toEqual([path, 400, 'invalid_request']);
    }
  });

  it("checks a key named only in the envelope's dsn once its first line is read", async () => {
    const before = await queued();
    // The first line is checked before the broken item after it is read.
    expect((await post(`/api/${n()}/envelope/`, brokenAfterHead({ dsn: dsnOf(unknownKey) }))).status).toBe(401);
    const across = await post(`/api/${n(other)}/envelope/`, brokenAfterHead({ dsn: dsnOf(key(), other) }));
    expect(across).toMatchObject({ status: 403, body: { code: 'forbidden' } });
    expect((await post(`/api/${n()}/envelope/`, brokenAfterHead({ dsn: dsnOf(key()) }))).status).toBe(400);
    const none = await post(`/api/${n()}/envelope/`, envelope(hex32()));
    expect(none).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    // The store route reads no envelope: its key comes from the query or header only.
    const store = await post(`/api/${n()}/store/`, JSON.stringify({ ...event(hex32()), dsn: dsnOf(key()) }));
    expect(store.status).toBe(401);
    expect(await queued()).toBe(before);
  });

  it("takes the request's key over an envelope's dsn: the dsn is then not read as a key", async () => {
    const id = hex32();
    const res = await post(
      `/api/${n()}/envelope/?sentry_key=${key()}`,
      envelope(id, { dsn: dsnOf(key(other), other) }),
    );
    expect(res).toMatchObject({ status: 200, body: { id } });
    expect(await acceptedIds(env)).toContain(id);
    expect(await acceptedIds(other)).not.toContain(id);
  });
});

describe('the OpenAPI document', () => {
  it("names the client key's schemes on the ingest routes, and keeps sentry-cli's secret key", async () => {
    type Op = { security?: Record<string, string[]>[]; responses: Record<string, unknown> };
    const res = await call<{
      paths: Record<string, Record<string, Op>>;
      components: { securitySchemes: Record<string, Record<string, string>> };
    }>(stack.web.url, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    for (const path of ['/api/{project_id}/envelope/', '/api/{project_id}/store/']) {
      const op = res.body.paths[path]!.post!;
      expect(op.security).toEqual([{ sentryKey: [] }, { sentryAuth: [] }]);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
    }
    expect(res.body.components.securitySchemes.sentryKey).toMatchObject({
      type: 'apiKey',
      in: 'query',
      name: 'sentry_key',
    });
    expect(res.body.components.securitySchemes.sentryAuth).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-Sentry-Auth',
    });
    const cli = Object.entries(res.body.paths).filter(([p]) => p.startsWith('/api/0/organizations/'));
    expect(cli.length).toBeGreaterThan(0);
    for (const [, ops] of cli)
      for (const op of Object.values(ops)) expect(op.security?.[0]).toHaveProperty('secretKey');
  });
});
