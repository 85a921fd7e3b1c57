// What a new user meets first, over HTTP: `/` is a small page linking the console, the documents
// and the health check; /docs lists docs/*.md and shows each, and names nothing outside docs/
// (an encoded `..` or slash is a 404, never a file); an unknown API path is still the JSON 404, and
// the routes beside them at the root (health, Sentry's ingestion, the OpenAPI document) answer as
// before. A console link's GET uses nothing: two GETs, then its button's POST signs in once; a
// second POST is the expired page naming the command that prints another. In Chromium, a person
// goes from `/` to a document and to the console, and through a link's page into the console.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConsoleLink } from '../../src/domain/console/links.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createTestEnv, useWeb } from '../support/harness.ts';
import { fetchForm, launchBrowser, newPage, postForm, sessionCookie } from './support.ts';

// At its CAIRN_BASE_URL: the link's form is refused from any other origin (csrf.ts).
const stack = useWeb({ atBaseUrl: true });
let env: CreatedEnv;
let browser: Browser;
beforeAll(async () => {
  env = await createTestEnv(stack.h.db);
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${stack.web.url}${path}`, { redirect: 'manual', headers });
const hrefs = (html: string) => [...html.matchAll(/<a [^>]*href="([^"]+)"/g)].map((m) => m[1]);

describe('the landing page', () => {
  it('is an HTML page linking the console, the docs and the health check', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(`${stack.web.url}/`, { method });
      expect(res.status, method).toBe(200);
      expect(res.headers.get('content-type'), method).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy'), method).toContain("frame-ancestors 'none'");
    }
    const html = await (await get('/')).text();
    expect(html).toContain('<title>Home · Cairn</title>');
    expect(hrefs(html)).toEqual(expect.arrayContaining(['/console', '/docs', '/healthz', '/v1/openapi.json']));
  });

  it('leaves every other path as it was: unknown API paths are the JSON 404, the root routes answer', async () => {
    for (const path of ['/v1/no/such/thing', '/nothing-here', '/api/0/nothing']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toContain('application/json');
      expect(await res.json(), path).toMatchObject({ code: 'not_found' });
    }
    expect(await (await get('/healthz')).json()).toEqual({ status: 'ok' });
    expect((await get('/readyz')).status).toBe(200);
    expect(((await (await get('/v1/openapi.json')).json()) as { openapi: string }).openapi).toBe('3.1.0');
    const eventId = 'a'.repeat(32);
    const envelope = [
      JSON.stringify({ event_id: eventId }),
      JSON.stringify({ type: 'event' }),
      JSON.stringify({ event_id: eventId, exception: { values: [{ type: 'FrontDoorError', value: 'still taken' }] } }),
    ].join('\n');
    const { projectNumber, publicKey } = env.clientKey;
    const sent = await fetch(`${stack.web.url}/api/${projectNumber}/envelope/?sentry_key=${publicKey}`, {
      method: 'POST',
      body: envelope,
    });
    expect(sent.status).toBe(200);
    expect(await sent.json()).toEqual({ id: eventId });
  });
});

describe('/docs', () => {
  it('lists the documents of docs/ and docs/architecture/, each by its title', async () => {
    const res = await get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await res.text();
    expect(hrefs(html)).toEqual(
      expect.arrayContaining(['/docs/api.md', '/docs/operations.md', '/docs/architecture/console.md']),
    );
    expect(html).toContain('The Cairn HTTP API');
    expect((await get('/docs/')).status).toBe(200);
  });

  it('shows a document as its markdown, escaped', async () => {
    const res = await get('/docs/architecture/console.md');
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toContain('<h1>The console</h1>');
    expect(html).toContain('## Sign-in');
    expect(html).toContain('`/console/sign-in/link` (`pages/sign-in-link.ts`)');
    const api = await (await get('/docs/api.md')).text();
    expect(api).toContain('<title>The Cairn HTTP API · Cairn</title>');
    // Markup in the markdown is text on the page, never markup.
    expect(api).not.toMatch(/<pre class="doc">[^]*<script/);
  });

  it('names nothing outside docs/: traversal, other files and unknown names are the 404 page', async () => {
    for (const path of [
      '/docs/..%2fpackage.json',
      '/docs/..%2F..%2Fetc%2Fpasswd',
      '/docs/architecture/..%2f..%2fREADME.md',
      '/docs/architecture/..%2fapi.md',
      '/docs/..%5cpackage.json',
      '/docs/README.md',
      '/docs/api',
      '/docs/nothing.md',
      '/docs/architecture',
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      const body = await res.text();
      expect(body, path).toContain('There is no such document');
      expect(body, path).not.toContain('"name": "cairn"');
    }
  });
});

describe("a console link's page", () => {
  it('is used by its POST only: two GETs, then the POST signs in; a second POST is the expired page', async () => {
    const link = (await createConsoleLink(stack.h.db, stack.web.url, env.env.id, null)).url;
    const first = await fetchForm(link);
    const second = await fetchForm(link);
    for (const page of [first, second]) {
      expect(page.status).toBe(200);
      expect(page.cookie).not.toContain('cairn_console_session=');
      expect(page.html).toContain('<form method="post" action="/console/sign-in/link">');
      expect(page.fields.token).toBe(new URL(link).searchParams.get('token'));
    }
    const action = `${stack.web.url}/console/sign-in/link`;
    const posted = await postForm(action, second.fields, second.cookie);
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toBe('/console/errors');
    const session = /cairn_console_session=([^;]+)/.exec(posted.headers.getSetCookie().join('\n'))?.[1];
    const inside = await get('/console/errors', { cookie: `cairn_console_session=${session}` });
    expect(inside.status).toBe(200);
    expect(await inside.text()).toContain(env.env.name);

    const again = await postForm(action, first.fields, first.cookie);
    expect(again.status).toBe(410);
    expect(again.headers.getSetCookie().join('\n')).not.toContain('cairn_console_session=');
    const gone = await again.text();
    expect(gone).toContain('already used or has expired');
    expect(gone).toContain(`npx cairn admin console-link --env ${env.env.name}`);
  });
});

describe('in Chromium', () => {
  it('goes from / to a document and back, and to the console', async () => {
    const page = await newPage(browser);
    await page.goto(`${stack.web.url}/`);
    await page.getByRole('main').getByRole('link', { name: 'Docs' }).click();
    await page.waitForURL(/\/docs$/);
    await page.getByRole('link', { name: 'The console', exact: true }).click();
    await page.waitForURL(/\/docs\/architecture\/console\.md$/);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('The console');
    await page.getByRole('navigation', { name: 'Site' }).getByRole('link', { name: 'Home' }).click();
    await page.waitForURL(`${stack.web.url}/`);
    await page.getByRole('main').getByRole('link', { name: 'Console' }).click();
    await page.waitForURL(/\/console\/sign-in$/);
    await expect(page.getByLabel('Secret key').isVisible()).resolves.toBe(true);
    await page.context().close();
  }, 60_000);

  it('follows a console link through its page: nothing until its button, then the console', async () => {
    const link = (await createConsoleLink(stack.h.db, stack.web.url, env.env.id, null)).url;
    const page = await newPage(browser);
    await page.goto(link);
    await expect(page.getByRole('heading', { name: 'Sign in to the console' }).isVisible()).resolves.toBe(true);
    expect(await sessionCookie(page)).toBeUndefined();
    await page.reload();
    expect(await sessionCookie(page)).toBeUndefined();
    await page.getByRole('button', { name: 'Sign in to the console' }).click();
    await page.waitForURL(/\/console\/errors$/);
    await expect(page.getByRole('heading', { name: 'Errors' }).isVisible()).resolves.toBe(true);
    expect(await sessionCookie(page)).toBeDefined();
    await page.context().close();
  }, 60_000);
});
