// The route kernel's console properties, on probe routes and the console's own pages: `auth:
// 'console'` finds the session of the console cookie through the app's resolver (none, or an
// ended one, is `unauthorized`; a key without the route's scope is `forbidden`, naming it), and
// `csrf: true` refuses a form post without the page's token before the handler runs. The
// stylesheet is served under its content hash, cached for a year, revalidated by its ETag, and
// Chromium applies it under the pages' CSP (a nonce, nothing else allowed).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openConsoleSession } from '../../src/domain/console/sessions.ts';
import { createKey, type CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { tenancyQueries } from '../../src/domain/tenancy/queries.ts';
import { form } from '../../src/html/page-route.ts';
import { defineRoute } from '../../src/http/route.ts';
import { createTestEnv, useWeb } from '../support/harness.ts';
import { audit, fetchForm, launchBrowser, newPage, postForm } from './support.ts';

let reached = 0;
const probes = [
  defineRoute({
    method: 'get',
    path: '/console/probe',
    operationId: 'probeConsole',
    summary: 'test probe',
    tags: ['Test'],
    auth: 'console',
    scope: 'observability:read',
    response: { status: 200, description: 'ok', schema: z.object({ env: z.string(), session: z.string() }) },
    handle: ({ principal }) => {
      reached += 1;
      return { env: principal.envName, session: principal.id };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/console/probe',
    operationId: 'probeConsoleForm',
    summary: 'test probe',
    tags: ['Test'],
    auth: 'console',
    csrf: true,
    bodyType: 'form',
    body: form('csrf'),
    response: { status: 200, description: 'ok', schema: z.object({ ok: z.boolean() }) },
    handle: () => {
      reached += 1;
      return { ok: true };
    },
  }),
];

const stack = useWeb({ routes: probes });
let env: CreatedEnv;
let browser: Browser;

beforeAll(async () => {
  env = await createTestEnv(stack.h.db);
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

const cookieOf = (token: string) => `cairn_console_session=${token}`;
async function sessionFor(scopes?: Parameters<typeof createKey>[3]) {
  const key = await createKey(stack.h.db, env.env, 'secret', scopes);
  return { key, token: await openConsoleSession(stack.h.db, env.env.id, key.key.id, 'key') };
}
const probe = (cookie?: string) =>
  fetch(`${stack.web.url}/console/probe`, { headers: cookie ? { cookie } : {}, redirect: 'manual' });

describe("auth: 'console'", () => {
  it('gives the handler the session of the cookie, with its environment', async () => {
    const { token } = await sessionFor();
    const res = await probe(cookieOf(token));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ env: env.env.name, session: expect.stringMatching(/^cs_/) });
  });

  it('refuses no cookie, an unknown token, and a session whose key was revoked, before the handler', async () => {
    const { key, token } = await sessionFor();
    await tenancyQueries(stack.h.db).revokeKey(key.key.id);
    const before = reached;
    for (const cookie of [undefined, cookieOf(`cairn_csess_${'A'.repeat(32)}`), cookieOf(token)]) {
      const res = await probe(cookie);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthorized' });
    }
    expect(reached).toBe(before);
  });

  it("refuses a key without the route's scope, naming it", async () => {
    const { token } = await sessionFor(['backups:read']);
    const res = await probe(cookieOf(token));
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({
      code: 'forbidden',
      details: { required_scope: 'observability:read' },
    });
  });

  it('sends a signed-out browser from a console page to the sign-in page', async () => {
    const res = await fetch(`${stack.web.url}/console/users`, { redirect: 'manual' });
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/console/sign-in');
  });
});

describe('csrf: true', () => {
  it("takes a form post with the page's token, and refuses one without it or with another's", async () => {
    const { token } = await sessionFor();
    const page = await fetchForm(`${stack.web.url}/console/sign-in`);
    const cookie = `${page.cookie}; ${cookieOf(token)}`;
    const url = `${stack.web.url}/console/probe`;
    const before = reached;
    const other = await fetchForm(`${stack.web.url}/console/sign-in`);
    const refused: Record<string, string>[] = [{}, { csrf: 'forged' }, { csrf: other.fields.csrf! }];
    for (const fields of refused) {
      const res = await postForm(url, fields, cookie);
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'forbidden', details: { reason: 'csrf' } });
    }
    expect(reached).toBe(before);
    const ok = await postForm(url, { csrf: page.fields.csrf! }, cookie);
    expect(ok.status).toBe(200);
    expect(reached).toBe(before + 1);
  });
});

describe("the console's stylesheet", () => {
  it('is linked with the page nonce, cached a year under its hash, and revalidated by its ETag', async () => {
    const page = await fetch(`${stack.web.url}/console/sign-in`);
    const csp = page.headers.get('content-security-policy')!;
    const nonce = /style-src 'nonce-([^']+)'/.exec(csp)![1]!;
    expect(csp).toMatch(/^default-src 'none'; style-src 'nonce-[^']+'; img-src/);
    const link = /<link rel="stylesheet" href="([^"]+)" nonce="([^"]+)">/.exec(await page.text())!;
    expect(link[1]).toMatch(/^\/console\/static\/console\.[0-9a-f]{16}\.css$/);
    expect(link[2]).toBe(nonce);

    const css = await fetch(`${stack.web.url}${link[1]}`);
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(css.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await css.text()).toContain('box-sizing: border-box');
    const etag = css.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    const again = await fetch(`${stack.web.url}${link[1]}`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    const stale = await fetch(`${stack.web.url}/console/static/console.0000000000000000.css`);
    expect(stale.status).toBe(404);
  });

  it('styles the pages in Chromium under their CSP, with no violation reported', async () => {
    const page = await newPage(browser);
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(`${stack.web.url}/console/sign-in`);
    // A string, so the test's own types need no DOM: what the page's body computes to.
    const styles = await page.evaluate<string>(
      '(() => { const s = getComputedStyle(document.body); return `${s.backgroundColor} ${s.margin}`; })()',
    );
    expect(styles).toBe('rgb(244, 245, 247) 0px');
    expect(violations).toEqual([]);
    expect(await audit(page)).toEqual([]);
    await page.context().close();
  }, 60_000);
});
