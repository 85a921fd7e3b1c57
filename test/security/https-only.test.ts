// An https deployment (CAIRN_BASE_URL https://…) answers only over https. Behind a trusted proxy
// (Heroku's router), a request the proxy says came over plain http (X-Forwarded-Proto: http) is
// redirected to the same path and query on the base URL's origin (GET, HEAD: 308) or refused with
// 403 https_required (anything else), before any handler runs; /healthz and /readyz stay open for
// health checks. Everything else carries Strict-Transport-Security, and its cookies are Secure
// without a 500, also when no proxy is trusted and the scheme cannot be seen. An http base URL
// (npm start) changes nothing. From outside over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleLink } from '../../src/domain/console/links.ts';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import { fetchForm, postForm } from '../console/support.ts';
import { testConfig } from '../support/config.ts';
import { call, createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { idleJobs } from '../support/jobs.ts';
import { strongPassword } from '../identity/support.ts';

const base = 'https://auth.example.test';
let h: Harness;
let env: CreatedEnv;
/** https base URL behind one trusted proxy (Heroku), behind none, and an http base URL. */
let proxied: WebHandle;
let direct: WebHandle;
let plain: WebHandle;

async function web(overrides: Record<string, string>): Promise<WebHandle> {
  return startWeb(testConfig(h.database.url, overrides), { host: '127.0.0.1', port: 0 });
}

// Not useWeb(): three webs with different HTTPS and proxy configuration share this database.
beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
  await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
    email: 'ada@example.com',
    password: strongPassword,
    email_verified: true,
  });
  proxied = await web({ CAIRN_BASE_URL: base, CAIRN_TRUSTED_PROXY_HOPS: '1' });
  direct = await web({ CAIRN_BASE_URL: base, CAIRN_TRUSTED_PROXY_HOPS: '0' });
  plain = await web({ CAIRN_TRUSTED_PROXY_HOPS: '1' });
});
afterAll(async () => {
  for (const w of [proxied, direct, plain]) await w?.stop();
  await h?.close();
});

const overHttp = { 'x-forwarded-proto': 'http' };
const overHttps = { 'x-forwarded-proto': 'https' };

async function get(w: WebHandle, path: string, headers: Record<string, string> = {}, method = 'GET') {
  const res = await fetch(`${w.url}${path}`, { method, headers, redirect: 'manual' });
  const html = await res.text();
  return { res, html, cookies: res.headers.getSetCookie() };
}

function post(w: WebHandle, path: string, fields: Record<string, string>, headers: Record<string, string>) {
  return fetch(`${w.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });
}

const signInPage = () => `/sign-in?publishable_key=${env.publishableKey}`;

describe('an https base URL behind a trusted proxy', () => {
  it('redirects GET and HEAD that came over http to the same path and query on https, except health checks', async () => {
    for (const [path, method] of [
      [signInPage(), 'GET'],
      ['/console/sign-in', 'GET'],
      ['/console/errors?page_size=5', 'HEAD'],
      ['/v1/openapi.json', 'GET'],
    ] as const) {
      const { res, cookies } = await get(proxied, path, overHttp, method);
      expect(res.status, path).toBe(308);
      expect(res.headers.get('location')).toBe(`${base}${path}`);
      expect(res.headers.get('strict-transport-security')).toBeNull();
      expect(cookies).toEqual([]);
    }
    // The target stays on the base URL's origin whatever the path looks like.
    const { res } = await get(proxied, '//evil.example/x?y=1', overHttp);
    expect(res.status).toBe(308);
    expect(new URL(res.headers.get('location')!).origin).toBe(base);
    // Health checks stay answerable over http.
    for (const path of ['/healthz', '/readyz']) expect((await get(proxied, path, overHttp)).res.status, path).toBe(200);
  });

  it('refuses anything else over http with 403 https_required, and changes nothing', async () => {
    const signIn = await call(proxied.url, 'POST', '/v1/client/sign-in/password', {
      body: { identifier: 'ada@example.com', password: strongPassword },
      headers: { 'cairn-publishable-key': env.publishableKey, ...overHttp },
    });
    expect(signIn).toMatchObject({ status: 403, body: { code: 'forbidden', details: { reason: 'https_required' } } });
    expect(signIn.body.message).toContain(`${base}/v1/client/sign-in/password`);
    expect(signIn.headers.get('strict-transport-security')).toBeNull();

    const create = await call(proxied.url, 'POST', `/v1/${env.env.name}/end_users`, {
      key: env.secretKey,
      body: { email: 'over-http@example.com', password: strongPassword },
      headers: overHttp,
    });
    expect(create).toMatchObject({ status: 403, body: { details: { reason: 'https_required' } } });
    expect(await h.db('end_users').where({ email: 'over-http@example.com' }).first()).toBeUndefined();

    const form = await post(proxied, '/sign-in', { email: 'ada@example.com', password: strongPassword }, overHttp);
    expect(form.status).toBe(403);
    expect(await form.json()).toMatchObject({ details: { reason: 'https_required' } });
    expect(form.headers.getSetCookie()).toEqual([]);
  });

  it('answers https with Strict-Transport-Security and Secure cookies, and a whole portal sign-in works', async () => {
    const page = await get(proxied, signInPage(), overHttps);
    expect(page.res.status).toBe(200);
    expect(page.res.headers.get('strict-transport-security')).toBe('max-age=31536000');
    expect(page.cookies.length).toBeGreaterThan(0);
    for (const c of page.cookies) expect(c).toMatch(/; secure/i);
    const api = await call(proxied.url, 'GET', '/healthz', { headers: overHttps });
    expect(api.headers.get('strict-transport-security')).toBe('max-age=31536000');

    const envId = /name="env" value="([^"]+)"/.exec(page.html)![1]!;
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.html)![1]!;
    const signedIn = await post(
      proxied,
      '/sign-in',
      { env: envId, email: 'ada@example.com', password: strongPassword, csrf },
      { ...overHttps, origin: base, cookie: page.cookies.map((c) => c.split(';')[0]).join('; ') },
    );
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('strict-transport-security')).toBe('max-age=31536000');
    expect(signedIn.headers.getSetCookie().find((c) => c.startsWith('cairn_portal_session='))).toMatch(/; secure/i);
  });

  it('takes a request whose proxy does not say the scheme as https: no redirect loop, no 500', async () => {
    for (const path of [signInPage(), '/console/sign-in']) {
      const { res, cookies } = await get(proxied, path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000');
      for (const c of cookies) expect(c).toMatch(/; secure/i);
    }
  });
});

describe('an https base URL with no proxy trusted', () => {
  it('cannot see the scheme, trusts the base URL: pages and sign-in links answer with Secure cookies, not 500', async () => {
    // X-Forwarded-Proto from an untrusted client means nothing.
    const page = await get(direct, signInPage(), overHttp);
    expect(page.res.status).toBe(200);
    expect(page.res.headers.get('strict-transport-security')).toBe('max-age=31536000');
    for (const c of page.cookies) expect(c).toMatch(/; secure/i);

    // A sign-in link's page, then its button (the POST that opens the session).
    const link = new URL((await createConsoleLink(h.db, base, env.env.id, null)).url);
    const opened = await fetchForm(`${direct.url}${link.pathname}${link.search}`);
    expect(opened.status).toBe(200);
    const signedIn = await postForm(`${direct.url}${link.pathname}`, opened.fields, opened.cookie);
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.getSetCookie().find((c) => c.startsWith('cairn_console_session='))).toMatch(/; secure/i);
  });
});

describe('an http base URL (npm start)', () => {
  it('redirects nothing and sends no Strict-Transport-Security', async () => {
    const page = await get(plain, signInPage(), overHttp);
    expect(page.res.status).toBe(200);
    expect(page.res.headers.get('strict-transport-security')).toBeNull();
    for (const c of page.cookies) expect(c).not.toMatch(/; secure/i);
    const api = await call(plain.url, 'POST', '/v1/client/password-reset', {
      body: { email: 'ada@example.com' },
      headers: { 'cairn-publishable-key': env.publishableKey, ...overHttp },
    });
    expect(api.status).toBe(202);
  });
});
