// End users with the secret key: create, get, list with pages and an email filter, delete;
// scopes and environments enforced; a tampered page token is invalid_request.
import { beforeAll, describe, expect, it } from 'vitest';
import { createKey, type CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { strongPassword } from './support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let other: CreatedEnv;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  other = await createTestEnv(h.db);
});

const path = (e: CreatedEnv, suffix = '') => `/v1/${e.env.name}/end_users${suffix}`;

describe('end users', () => {
  it('creates without a password, reads, and refuses a duplicate address', async () => {
    const created = await call(web.url, 'POST', path(env), { key: env.secretKey, body: { email: 'Lin@Example.com' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      email: 'Lin@Example.com',
      email_verified: false,
      has_password: false,
      totp_enabled: false,
      last_sign_in_time: null,
    });
    expect(created.body.name).toBe(`${env.env.name}/end_users/${created.body.id}`);
    const got = await call(web.url, 'GET', path(env, `/${created.body.id}`), { key: env.secretKey });
    expect(got).toMatchObject({ status: 200, body: { id: created.body.id } });
    const dup = await call(web.url, 'POST', path(env), { key: env.secretKey, body: { email: 'lin@example.com' } });
    expect(dup).toMatchObject({ status: 409, body: { code: 'conflict' } });
  });

  it('checks passwords like sign-up: length and breached lists', async () => {
    expect(
      await call(web.url, 'POST', path(env), {
        key: env.secretKey,
        body: { email: 'a@example.com', password: 'short' },
      }),
    ).toMatchObject({ status: 400 });
    expect(
      await call(web.url, 'POST', path(env), {
        key: env.secretKey,
        body: { email: 'a@example.com', password: 'qwertyuiop12345' },
      }),
    ).toMatchObject({ status: 400, body: { details: { reason: 'breached_password' } } });
    expect(
      await call(web.url, 'POST', path(env), {
        key: env.secretKey,
        body: { email: 'a@example.com', password: strongPassword, email_verified: true },
      }),
    ).toMatchObject({ status: 201, body: { has_password: true, email_verified: true } });
  });

  it('lists newest first in pages, filters by email, and refuses a tampered token', async () => {
    for (let i = 0; i < 5; i++)
      await call(web.url, 'POST', path(env), { key: env.secretKey, body: { email: `page${i}@example.com` } });
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const res = await call<{ end_users: { email: string }[]; next_page_token?: string }>(
        web.url,
        'GET',
        path(env, `?page_size=3${token ? `&page_token=${token}` : ''}`),
        { key: env.secretKey },
      );
      expect(res.status).toBe(200);
      seen.push(...res.body.end_users.map((u) => u.email));
      token = res.body.next_page_token;
      if (token) {
        const tampered = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
        expect(
          (await call(web.url, 'GET', path(env, `?page_token=${tampered}`), { key: env.secretKey })).body,
        ).toMatchObject({ code: 'invalid_request' });
      }
    } while (token);
    expect(seen).toHaveLength(7);
    expect(seen[0]).toBe('page4@example.com');
    const filtered = await call<{ end_users: { email: string }[] }>(
      web.url,
      'GET',
      path(env, '?email=PAGE2@example.com'),
      { key: env.secretKey },
    );
    expect(filtered.body.end_users.map((u) => u.email)).toEqual(['page2@example.com']);
  });

  it("keeps environments apart and enforces the key's scopes", async () => {
    const mine = await call<{ end_users: { id: string }[] }>(web.url, 'GET', path(env), { key: env.secretKey });
    const id = mine.body.end_users[0]!.id;
    expect((await call(web.url, 'GET', path(other, `/${id}`), { key: other.secretKey })).status).toBe(404);
    expect((await call(web.url, 'DELETE', path(other, `/${id}`), { key: other.secretKey })).status).toBe(404);
    expect((await call(web.url, 'GET', path(env, `/${id}`), { key: other.secretKey })).status).toBe(403);
    const readOnly = await createKey(h.db, env.env, 'secret', ['auth:read']);
    expect((await call(web.url, 'GET', path(env, `/${id}`), { key: readOnly.token })).status).toBe(200);
    expect(await call(web.url, 'DELETE', path(env, `/${id}`), { key: readOnly.token })).toMatchObject({
      status: 403,
      body: { details: { required_scope: 'auth:write' } },
    });
    expect((await call(web.url, 'GET', path(env), { key: env.publishableKey })).status).toBe(403);
    expect((await call(web.url, 'DELETE', path(env, `/${id}`), { key: env.secretKey })).status).toBe(200);
    expect((await call(web.url, 'DELETE', path(env, `/${id}`), { key: env.secretKey })).status).toBe(404);
  });
});

describe('identity settings', () => {
  const settingsPath = () => `/v1/${env.env.name}/identity_settings`;
  it('reads defaults, replaces them, and feeds the client configuration', async () => {
    const got = await call(web.url, 'GET', settingsPath(), { key: env.secretKey });
    expect(got).toMatchObject({
      status: 200,
      body: {
        require_second_factor: false,
        session_idle_seconds: 604800,
        session_lifetime_seconds: 2592000,
        redirect_origins: [],
      },
    });
    const put = await call(web.url, 'PUT', settingsPath(), {
      key: env.secretKey,
      body: {
        branding: { name: 'Acme', logo_url: 'https://acme.example/logo.png' },
        require_second_factor: true,
        redirect_origins: ['https://acme.example'],
      },
    });
    expect(put).toMatchObject({ status: 200, body: { require_second_factor: true, branding: { name: 'Acme' } } });
    const config = await call(web.url, 'GET', `/v1/client/config?publishable_key=${env.publishableKey}`);
    expect(config.body).toMatchObject({
      branding: { name: 'Acme', logo_url: 'https://acme.example/logo.png' },
      second_factor_required: true,
      methods: { password: { min_length: 8 } },
    });
    const signUp = (redirect_url: string) =>
      call(web.url, 'POST', '/v1/client/sign-up', {
        body: { email: 'origin@example.com', password: 'eight ch', redirect_url },
        headers: { 'cairn-publishable-key': env.publishableKey },
      });
    expect((await signUp('https://evil.example/x')).status).toBe(400);
    expect((await signUp('https://acme.example/welcome')).status).toBe(202);
  });

  it('refuses unknown fields and bad values', async () => {
    for (const body of [
      { colour: 'red' },
      { redirect_origins: ['https://a.example/path'] },
      { rate_limits: { everything: { points: 1, seconds: 1 } } },
      { session_idle_seconds: 1 },
    ]) {
      expect(await call(web.url, 'PUT', settingsPath(), { key: env.secretKey, body })).toMatchObject({
        status: 400,
        body: { code: 'invalid_request' },
      });
    }
  });
});
