// The Account Portal over plain HTTP: security headers (no framing, CSP), branding, CSRF on every
// form, the pages' statuses, and fast-check properties that no form input gives a 500.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;

const stack = useWeb({ atBaseUrl: true });
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  await call(web.url, 'PUT', `/v1/${env.env.name}/identity_settings`, {
    key: env.secretKey,
    body: {
      branding: { name: 'Acme Shop', colors: { primary: '#ffcc00' } },
      redirect_urls: ['https://shop.example.test/done'],
    },
  });
});

/** A page fetched with the browser's cookie and the CSRF token it carries. */
async function open(path: string): Promise<{ res: Response; html: string; cookie: string; csrf: string }> {
  const res = await fetch(`${web.url}${path}`, { redirect: 'manual' });
  const html = await res.text();
  const cookie = (res.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
  return { res, html, cookie, csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '' };
}

const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${web.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });

describe('pages', () => {
  it('forbid framing, carry a strict CSP, and are branded per environment', async () => {
    const { res, html } = await open(`/sign-in?publishable_key=${env.publishableKey}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(html).toContain('<html lang="en">');
    expect(html).toContain('Acme Shop');
    // Yellow is too light for white text: the button text turns dark for contrast.
    expect(html).toMatch(/--primary:#ffcc00;--on-primary:#111111/);
    expect(html).toMatch(/<label for="email">Email<\/label>\s*<input id="email"/);
    expect(html).toMatch(/<label for="password">/);
  });

  it('answer clear pages for bad links, and refuse redirect_urls off the list', async () => {
    expect((await open('/sign-in?publishable_key=cairn_pk_test_nope')).res.status).toBe(404);
    expect(
      (await open(`/sign-in?publishable_key=${env.publishableKey}&redirect_url=https://evil.example/`)).res.status,
    ).toBe(400);
    const verify = await open('/verify-email?status=invalid');
    expect(verify.res.status).toBe(400);
    expect(verify.html).toContain('role="alert"');
    expect((await open('/verify-email?email_verified=true')).html).toContain('Email confirmed');
    const device = await open('/device?user_code=BBBB-BBBB');
    expect(device.res.status).toBe(404);
    expect(device.html).toMatch(/role="alert"[^>]*>That code is not valid/);
    expect(device.html).toContain('aria-invalid="true"');
  });
});

describe('CSRF', () => {
  it("refuses a form without the token, with another browser's token, or from another origin", async () => {
    const a = await open(`/sign-in?publishable_key=${env.publishableKey}`);
    const b = await open(`/sign-in?publishable_key=${env.publishableKey}`);
    const envId = /name="env" value="([^"]+)"/.exec(a.html)![1]!;
    const fields = { env: envId, email: 'x@example.com', password: 'whatever whatever' };
    expect((await post('/sign-in', fields, { cookie: a.cookie })).status).toBe(403);
    expect((await post('/sign-in', { ...fields, csrf: b.csrf }, { cookie: a.cookie })).status).toBe(403);
    expect(
      (await post('/sign-in', { ...fields, csrf: a.csrf }, { cookie: a.cookie, origin: 'https://evil.example' }))
        .status,
    ).toBe(403);
    const ok = await post(
      '/sign-in',
      { ...fields, csrf: a.csrf },
      { cookie: a.cookie, origin: new URL(h.config.CAIRN_BASE_URL).origin },
    );
    expect(ok.status).toBe(401);
    expect(await ok.text()).toContain('The identifier or password is wrong');
  });
});

describe('sign-up page', () => {
  it('accepts a sign-up and says to check the mail, refusing a short password on the same page', async () => {
    const a = await open(`/sign-up?publishable_key=${env.publishableKey}`);
    expect(a.html).toContain('autocomplete="new-password"');
    const envId = /name="env" value="([^"]+)"/.exec(a.html)![1]!;
    const short = await post(
      '/sign-up',
      { csrf: a.csrf, env: envId, email: 'new@example.com', password: 'short' },
      { cookie: a.cookie },
    );
    expect(short.status).toBe(400);
    expect(await short.text()).toMatch(/role="alert"/);
    const ok = await post(
      '/sign-up',
      { csrf: a.csrf, env: envId, email: 'new@example.com', password: 'a long enough passphrase for this' },
      { cookie: a.cookie },
    );
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Check your email');
    expect(await h.db('identity_pending_signups').where({ email: 'new@example.com' }).first()).toBeDefined();
  });
});

describe('no form input gives a 500', () => {
  it('holds for every POST page, with and without a valid token', async () => {
    const a = await open(`/sign-in?publishable_key=${env.publishableKey}`);
    const envId = /name="env" value="([^"]+)"/.exec(a.html)![1]!;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/sign-in', '/sign-in/factor', '/sign-up', '/device', '/consent', '/sign-out'),
        fc.dictionary(
          fc.constantFrom('env', 'email', 'password', 'redirect_url', 'state', 'code', 'user_code', 'decision', 'next'),
          fc.string({ maxLength: 40 }),
          { maxKeys: 6 },
        ),
        fc.boolean(),
        fc.boolean(),
        async (path, fields, withToken, withEnv) => {
          const r = await post(
            path,
            { ...fields, ...(withToken ? { csrf: a.csrf } : {}), ...(withEnv ? { env: envId } : {}) },
            { cookie: a.cookie },
          );
          expect(r.status).toBeLessThan(500);
        },
      ),
      { numRuns: 50 },
    );
  });
});
