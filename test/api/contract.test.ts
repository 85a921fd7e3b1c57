// The contract in src/contract/: answers are checked against their schemas, and every list pages
// through one paginate() whose tokens belong to one list.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute } from '../../src/http/route.ts';
import { envParams } from '../../src/contract/tenancy.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, startTestWeb, type Harness, useWeb } from '../support/harness.ts';

// A handler that answers a shape its declaration does not promise.
const drifted = defineRoute({
  method: 'get',
  path: '/v1/orgs/{org}/projects/{project}/envs/{env}/probe_drifted',
  operationId: 'probeDrifted',
  summary: 'test probe',
  tags: ['Test'],
  auth: 'secret',
  params: envParams,
  response: { status: 200, description: 'ok', schema: z.object({ count: z.number().int() }) },
  handle: () => ({ count: '3' }) as unknown as { count: number },
});

// A handler that answers a field its declaration does not name: the document would hide it.
const undocumented = defineRoute({
  method: 'get',
  path: '/v1/orgs/{org}/projects/{project}/envs/{env}/probe_undocumented',
  operationId: 'probeUndocumented',
  summary: 'test probe',
  tags: ['Test'],
  auth: 'secret',
  params: envParams,
  response: {
    status: 200,
    description: 'ok',
    schema: z.object({ items: z.array(z.object({ id: z.string() })) }),
  },
  handle: () => ({ items: [{ id: 'a' }, { id: 'b', secret_hash: 'x' }] }),
});

let h: Harness;
let checked: WebHandle;
let unchecked: WebHandle;
let env: CreatedEnv;
const base = () => `/v1/${env.env.name}`;

const stack = useWeb({ routes: [drifted, undocumented] });
beforeAll(async () => {
  ({ h, web: checked } = stack);
  unchecked = await startTestWeb(h, { routes: [drifted], checkResponses: false });
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  await unchecked?.stop();
});

describe('response schemas', () => {
  it('are checked under tests: an answer that drifts from its schema fails loudly', async () => {
    const res = await call<{ code: string }>(checked.url, 'GET', `${base()}/probe_drifted`, {
      key: env.secretKey,
    });
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('internal');
  });

  it('name every field: one the schema does not declare fails too', async () => {
    const res = await call<{ code: string }>(checked.url, 'GET', `${base()}/probe_undocumented`, {
      key: env.secretKey,
    });
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('internal');
  });

  it('are not checked when turned off (production answers are not parsed twice)', async () => {
    const res = await call(unchecked.url, 'GET', `${base()}/probe_drifted`, { key: env.secretKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: '3' });
  });
});

describe('paginate()', () => {
  const users = 7;
  beforeAll(async () => {
    for (let i = 0; i < users; i++) {
      const res = await call(checked.url, 'POST', `${base()}/end_users`, {
        key: env.secretKey,
        body: { email: `pager${i}@example.com` },
      });
      expect(res.status).toBe(201);
    }
  });

  it('walks a list page by page, each item once, and says when it ends', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const res = await call<{ end_users: { id: string }[]; next_page_token?: string }>(
        checked.url,
        'GET',
        `${base()}/end_users?page_size=3${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
        { key: env.secretKey },
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.end_users.map((u) => u.id));
      token = res.body.next_page_token;
      pages += 1;
    } while (token);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(users);
    expect(seen).toEqual([...seen].sort().reverse());
  });

  it("refuses one list's token on another list", async () => {
    const first = await call<{ end_users: { id: string }[]; next_page_token: string }>(
      checked.url,
      'GET',
      `${base()}/end_users?page_size=1`,
      { key: env.secretKey },
    );
    const user = first.body.end_users[0]!.id;
    const token = encodeURIComponent(first.body.next_page_token);
    const other = await call<{ code: string; details: unknown }>(
      checked.url,
      'GET',
      `${base()}/end_users/${user}/sessions?page_token=${token}`,
      { key: env.secretKey },
    );
    expect(other.status).toBe(400);
    expect(other.body.code).toBe('invalid_request');
    expect(JSON.stringify(other.body.details)).toContain('query.page_token');
  });
});
