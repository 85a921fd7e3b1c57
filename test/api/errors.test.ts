// One error model for every /v1 route (docs/api.md): code, message, request_id; statuses per code.
import { validate } from '@readme/openapi-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import type { WebHandle } from '../../src/server.ts';
import { gzipSync } from 'node:zlib';
import { call, type Harness, useWeb } from '../support/harness.ts';
import { probeRoutes } from '../support/probes.ts';

let h: Harness;
let web: WebHandle;

const stack = useWeb({ routes: probeRoutes() });
beforeAll(async () => {
  ({ h, web } = stack);
});

describe('error model', () => {
  it('names every bad field of a zod-validated body', async () => {
    const res = await call(web.url, 'POST', '/v1/probe/echo', {
      body: { name: '', count: -1, nested: { hex: 'xyz' } },
    });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_request');
    const fields = (res.body.details as { fields: { field: string }[] }).fields.map((f) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['body.name', 'body.count', 'body.nested.hex']));
    expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('answers invalid_request for a body that is not JSON', async () => {
    const res = await call(web.url, 'POST', '/v1/probe/echo', {
      rawBody: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(res).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
  });

  it('answers 413 invalid_request for an oversized body', async () => {
    const res = await call(web.url, 'POST', '/v1/probe/echo', {
      body: { name: 'x'.repeat(101 * 1024), count: 1, nested: { hex: 'abcd' } },
    });
    expect(res).toMatchObject({ status: 413, body: { code: 'invalid_request' } });
    // Sent without a Content-Length, plain or gzipped: refused as the limit is passed, and the
    // answer arrives (the rest is dropped as it comes, not the connection).
    const big = Buffer.from(JSON.stringify({ name: 'x'.repeat(4 * 1024 * 1024) }));
    for (const [body, encoding] of [
      [big, 'identity'],
      [gzipSync(big), 'gzip'],
    ] as const) {
      const streamed = await fetch(`${web.url}/v1/probe/echo`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        body: new Blob([body]).stream(),
        duplex: 'half',
      } as RequestInit);
      expect(streamed.status, encoding).toBe(413);
    }
  });

  it('answers not_found for an unknown route', async () => {
    const res = await call(web.url, 'GET', '/v1/no/such/thing');
    expect(res).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('answers internal without leaking detail', async () => {
    const res = await call(web.url, 'GET', '/v1/probe/boom');
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('internal');
    const text = JSON.stringify(res.body);
    expect(text).not.toMatch(/hunter2|internal\.ts|secret detail|stack/);
    expect(res.body.request_id).toMatch(/^req_/);
  });

  it('keeps a sane incoming X-Request-Id (Heroku router) and replaces a bad one', async () => {
    const kept = await call(web.url, 'GET', '/v1/no/such', { headers: { 'x-request-id': 'heroku-1234-abcd' } });
    expect(kept.body.request_id).toBe('heroku-1234-abcd');
    const replaced = await call(web.url, 'GET', '/v1/no/such', { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(replaced.body.request_id).toMatch(/^req_/);
  });
});

describe('health', () => {
  it('answers /healthz and /readyz', async () => {
    expect((await call(web.url, 'GET', '/healthz')).body).toEqual({ status: 'ok' });
    expect((await call(web.url, 'GET', '/readyz')).body).toEqual({ status: 'ready', backup_drills: { failed: 0 } });
  });

  it('is not ready while a migration is pending', async () => {
    const [last] = await h.db('knex_migrations').orderBy('id', 'desc').limit(1);
    await h.db('knex_migrations').where({ id: last.id }).delete();
    try {
      const res = await call(web.url, 'GET', '/readyz');
      expect(res).toMatchObject({ status: 503, body: { status: 'migrations_pending' } });
    } finally {
      await h.db('knex_migrations').insert(last);
    }
    expect((await call(web.url, 'GET', '/readyz')).status).toBe(200);
  });
});

describe('OpenAPI', () => {
  it('serves a valid OpenAPI 3.1 document generated from the routes', async () => {
    const res = await call(web.url, 'GET', '/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    const doc = structuredClone(res.body);
    const result = await validate(doc as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    const paths = res.body.paths as Record<string, Record<string, { operationId: string }>>;
    expect(paths['/v1/orgs/{org}/projects/{project}/envs/{env}']?.get?.operationId).toBe('getEnvironment');
    expect(paths['/v1/probe/echo']?.post?.operationId).toBe('probeEcho');
    expect(paths['/v1/oauth/token']?.post?.operationId).toBe('token');
    expect(paths['/v1/oidc/callback']?.post?.operationId).toBe('oidcCallbackFormPost');
  });
});

describe('CORS', () => {
  it('lets browsers call client routes from any origin, without credentials', async () => {
    const pre = await fetch(`${web.url}/v1/client/config`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://shop.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'cairn-publishable-key',
      },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(pre.headers.get('access-control-allow-headers')).toMatch(/Cairn-Publishable-Key/);
    expect(pre.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('sends no CORS headers on server routes', async () => {
    const res = await fetch(`${web.url}/v1/orgs/a/projects/b/envs/c`, { headers: { origin: 'https://shop.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});
