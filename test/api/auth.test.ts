// The key middleware: every failure has its code and status, and nothing is read before it passes.
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../../src/http/route.ts';
import { envParams } from '../../src/contract/tenancy.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createKey } from '../../src/domain/tenancy/envs.ts';
import { tenancyQueries } from '../../src/domain/tenancy/queries.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';

// Probes that count how often a handler ran: a refused request must never reach it.
let reached = 0;
const probeRoutes = [
  defineRoute({
    method: 'get',
    path: '/v1/orgs/{org}/projects/{project}/envs/{env}/probe_scoped',
    operationId: 'probeScoped',
    summary: 'test probe',
    tags: ['Test'],
    auth: 'secret',
    scope: 'observability:read',
    params: envParams,
    response: { status: 200, description: 'ok', schema: z.object({ ok: z.boolean() }) },
    handle: () => {
      reached += 1;
      return { ok: true };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/v1/client/probe',
    operationId: 'probeClient',
    summary: 'test probe',
    tags: ['Test'],
    auth: 'publishable',
    response: { status: 200, description: 'ok', schema: z.object({ env: z.string() }) },
    handle: ({ principal }) => {
      reached += 1;
      return { env: principal.envName };
    },
  }),
];

let h: Harness;
let web: WebHandle;
let a: CreatedEnv;
let b: CreatedEnv;
const path = (env: CreatedEnv, suffix = '') => `/v1/${env.env.name}${suffix}`;

const stack = useWeb({ routes: probeRoutes });
beforeAll(async () => {
  ({ h, web } = stack);
  a = await createTestEnv(h.db, 'orgs/acme/projects/shop/envs/prod');
  b = await createTestEnv(h.db, 'orgs/acme/projects/shop/envs/staging');
});

describe('secret keys', () => {
  it('reach their own environment', async () => {
    const res = await call(web.url, 'GET', path(a), { key: a.secretKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'orgs/acme/projects/shop/envs/prod', mode: 'test' });
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
  });

  const refusals: [string, () => { key?: string; headers?: Record<string, string> }, number, string][] = [
    ['no key', () => ({}), 401, 'unauthorized'],
    ['a malformed key', () => ({ key: 'cairn_sk_test_short' }), 401, 'unauthorized'],
    ['a non-bearer header', () => ({ headers: { authorization: `Basic ${a.secretKey}` } }), 401, 'unauthorized'],
    ['an unknown well-formed key', () => ({ key: `cairn_sk_test_${'A'.repeat(32)}` }), 401, 'unauthorized'],
    ["another environment's key", () => ({ key: b.secretKey }), 403, 'forbidden'],
    ['a publishable key on a server route', () => ({ key: a.publishableKey }), 403, 'forbidden'],
  ];
  for (const [what, options, status, code] of refusals) {
    it(`refuses ${what} with ${code}`, async () => {
      const before = reached;
      const res = await call(web.url, 'GET', path(a, '/probe_scoped'), options());
      expect(res.status).toBe(status);
      expect(res.body).toMatchObject({ code, request_id: res.headers.get('x-request-id') });
      expect(String(res.body.message)).not.toContain(a.secretKey);
      expect(reached).toBe(before);
    });
  }

  it('refuses a revoked key at once', async () => {
    const created = await createKey(h.db, a.env, 'secret');
    expect((await call(web.url, 'GET', path(a), { key: created.token })).status).toBe(200);
    await tenancyQueries(h.db).revokeKey(created.key.id);
    const res = await call(web.url, 'GET', path(a), { key: created.token });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'unauthorized', message: expect.stringContaining('revoked') });
  });

  it('refuses a key without the route scope, naming the scope', async () => {
    const narrow = await createKey(h.db, a.env, 'secret', ['auth:read']);
    const before = reached;
    const res = await call(web.url, 'GET', path(a, '/probe_scoped'), { key: narrow.token });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'forbidden', details: { required_scope: 'observability:read' } });
    expect(reached).toBe(before);
    const wide = await call(web.url, 'GET', path(a, '/probe_scoped'), { key: a.secretKey });
    expect(wide.status).toBe(200);
    expect(reached).toBe(before + 1);
  });

  it('stores keys only as hashes', async () => {
    const dump = JSON.stringify(await h.db('api_keys').select());
    expect(dump).not.toContain(a.secretKey.slice(14));
    expect(dump).not.toContain(a.publishableKey.slice(14));
  });
});

describe('publishable keys', () => {
  it('are accepted as a query parameter or a header on client routes', async () => {
    const q = await call(web.url, 'GET', `/v1/client/probe?publishable_key=${a.publishableKey}`);
    expect(q).toMatchObject({ status: 200, body: { env: a.env.name } });
    const hd = await call(web.url, 'GET', '/v1/client/probe', {
      headers: { 'cairn-publishable-key': b.publishableKey },
    });
    expect(hd).toMatchObject({ status: 200, body: { env: b.env.name } });
  });

  it('refuses a secret key on a client route', async () => {
    const res = await call(web.url, 'GET', `/v1/client/probe?publishable_key=${a.secretKey}`);
    expect(res).toMatchObject({ status: 403, body: { code: 'forbidden' } });
  });

  it('refuses a missing publishable key', async () => {
    const res = await call(web.url, 'GET', '/v1/client/probe');
    expect(res).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
  });
});
