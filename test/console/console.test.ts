// The console in a real headless Chromium (Debian's chromium, driven by playwright-core): signing
// in with a secret key (a wrong one sets no cookie), the errors page, sign-out, a POST without its
// CSRF token, and a revoked key ending the session. Every page passes an axe-core audit (no serious
// or critical violation). Screenshots go to test-results/console/ (gitignored).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/tenancy/envs.ts';
import { tenancyQueries } from '../../src/domain/tenancy/queries.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { handlers } from '../../workers/handlers.ts';
import { queues } from '../../src/queues.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { encode } from '@jridgewell/sourcemap-codec';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { capture, envBase, groupIdOf, readStored, sampleEvent } from '../errors/support.ts';
import { pageFrame } from '../errors/sentry/fixtures/browser-event.ts';
import { audit, launchBrowser, newPage as openPage, sessionCookie, shots, signIn as signInAs } from './support.ts';

let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<typeof queues>;
let env: CreatedEnv;
let browser: Browser;
/** The group of the symbolicated event (checkoutEvent). */
let checkoutGroup: string;

/** A hand-made map of a one-line bundle: its first line is `applyCoupon` at src/checkout.ts:4:3. */
const checkoutMap = {
  version: 3,
  file: 'min.js',
  sources: ['src/checkout.ts'],
  sourcesContent: [
    '// checkout\nexport function applyCoupon(code: string) {\n  // the coupon must exist\n  throw new CheckoutError(code);\n}\n',
  ],
  names: ['applyCoupon'],
  mappings: encode([[[0, 0, 3, 2, 0]]]),
};
const checkoutEvent = () =>
  sampleEvent({
    exception_type: 'CheckoutError',
    message: 'coupon SPRING is unknown',
    release: 'shop@1.0.0',
    stack: [
      'CheckoutError: coupon SPRING is unknown',
      '    at a (https://shop.example.com/min.js:1:15)',
      '    at https://shop.example.com/vendor.js:1:99',
    ].join('\n'),
    tags: { plan: 'pro' },
    breadcrumbs: [{ timestamp: '2026-11-21T11:59:58Z', category: 'ui.click', message: 'clicked Apply coupon' }],
  });

// At its CAIRN_BASE_URL: the console's forms are refused from any other origin (csrf.ts).
const stack = useWeb({ atBaseUrl: true });
beforeAll(async () => {
  ({ h, web } = stack);
  worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  env = await createTestEnv(h.db);
  for (const e of [
    sampleEvent(),
    sampleEvent({ exception_type: 'RangeError', message: 'Invalid array length', service_name: 'billing' }),
  ])
    await readStored(web, env, await capture(web, env, e));
  const put = await call(web.url, 'PUT', `${envBase(env)}/releases/shop@1.0.0/source_maps`, {
    key: env.secretKey,
    body: { file: 'https://shop.example.com/min.js', source_map: checkoutMap },
  });
  expect(put.status).toBe(201);
  checkoutGroup = groupIdOf((await readStored(web, env, await capture(web, env, checkoutEvent()))).body.name);
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

const newPage = () => openPage(browser);
const signIn = (page: Page, key: string) => signInAs(page, web.url, key);

describe('the console in Chromium', () => {
  it('signs in with a secret key, lists the errors, refuses a POST without its CSRF token, signs out', async () => {
    const page = await newPage();
    // Signed out, any console page leads to the sign-in page.
    await page.goto(`${web.url}/console/errors`);
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    expect(await audit(page)).toEqual([]);
    const headers = (await page.request.get(`${web.url}/console/sign-in`)).headers();
    expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");

    // A wrong key: an error, and no session cookie.
    await signIn(page, 'cairn_sk_test_' + 'x'.repeat(32));
    await expect(page.getByRole('alert').textContent()).resolves.toContain(
      'does not open the console: the API key is not valid',
    );
    expect(await sessionCookie(page)).toBeUndefined();
    await page.screenshot({ path: `${shots}/sign-in-error.png`, fullPage: true });

    await signIn(page, env.secretKey);
    expect(new URL(page.url()).pathname).toBe('/console/errors');
    const cookie = await sessionCookie(page);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/console' });
    expect(cookie!.value).not.toContain(env.secretKey.slice(-12));
    await expect(page.getByRole('heading', { name: 'Errors' }).isVisible()).resolves.toBe(true);
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(3);
    // Each group's occurrences of the last 14 days, an image named in words.
    expect(await page.getByRole('img', { name: /^Events per day, last 14 days: 1 event, most on / }).count()).toBe(3);
    await expect(page.locator('tbody').textContent()).resolves.toMatch(
      /RangeError[\s\S]*Invalid array length[\s\S]*TypeError/,
    );
    for (const name of ['Errors', 'Users', 'Backups'])
      expect(await page.getByRole('link', { name, exact: true }).count()).toBe(1);
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/errors.png`, fullPage: true });

    // Filters: a service, and the other states (nothing acknowledged yet).
    await page.getByRole('link', { name: 'billing' }).click();
    expect(await rows.count()).toBe(1);
    await page.getByRole('link', { name: 'Acknowledged' }).click();
    await expect(page.locator('.empty').textContent()).resolves.toContain('No acknowledged errors');

    // A POST without its CSRF token answers 403 and changes nothing: still signed in.
    const forged = await page.request.post(`${web.url}/console/sign-out`, { form: {}, maxRedirects: 0 });
    expect(forged.status()).toBe(403);
    await page.goto(`${web.url}/console/errors`);
    expect(new URL(page.url()).pathname).toBe('/console/errors');

    // "Sign out" ends the session on the server: the old cookie no longer opens a page.
    const old = (await sessionCookie(page))!.value;
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    const replay = await page.request.get(`${web.url}/console/errors`, {
      headers: { cookie: `cairn_console_session=${old}` },
      maxRedirects: 0,
    });
    expect(replay.status()).toBe(303);
    expect(replay.headers()['location']).toBe('/console/sign-in');
    await page.context().close();
  });

  it("shows a group's chart, mapped frames, tags and breadcrumbs, and triages it with the page's etag", async () => {
    const page = await newPage();
    await signIn(page, env.secretKey);
    await page.getByRole('link', { name: 'CheckoutError: coupon SPRING is unknown' }).click();
    expect(new URL(page.url()).pathname).toBe(`/console/errors/${checkoutGroup}`);
    await expect(
      page.getByRole('heading', { level: 1, name: 'CheckoutError: coupon SPRING is unknown' }).isVisible(),
    ).resolves.toBe(true);
    expect(await page.getByRole('img', { name: /^Events per day, last 14 days: 1 event/ }).count()).toBe(1);
    // The mapped frame, its code, and the minified frame behind one click; why the other is not mapped, once.
    const frames = page.locator('.frame');
    await expect(frames.nth(0).textContent()).resolves.toMatch(/applyCoupon[\s\S]*src\/checkout\.ts:4:3/);
    await expect(frames.nth(0).locator('.hit').textContent()).resolves.toContain('throw new CheckoutError(code);');
    await expect(frames.nth(0).getByText('min.js:1:15').isVisible()).resolves.toBe(false);
    await frames.nth(0).getByText('Minified frame').click();
    await expect(frames.nth(0).getByText('https://shop.example.com/min.js:1:15').isVisible()).resolves.toBe(true);
    await expect(page.locator('.unmapped').textContent()).resolves.toBe(
      '1 of 2 frames not mapped: no source map of this release is for this file.',
    );
    await expect(frames.nth(1).locator('.tag').textContent()).resolves.toBe('not mapped');
    await expect(page.locator('h3:has-text("Tags of this event") + table').textContent()).resolves.toMatch(
      /plan\s*pro/,
    );
    await expect(page.getByText('clicked Apply coupon').isVisible()).resolves.toBe(true);
    await expect(page.locator('main').textContent()).resolves.toContain('release shop@1.0.0');
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/group.png`, fullPage: true });

    // A second tab keeps the page as it is now (unresolved, its etag).
    const stale = await page.context().newPage();
    await stale.goto(page.url());
    const button = (p: Page, name: string) => p.getByRole('button', { name, exact: true });
    expect(await button(page, 'Reopen').isDisabled()).toBe(true);
    await button(page, 'Acknowledge').click();
    await expect(page.locator('.state').textContent()).resolves.toBe('acknowledged');
    expect(await button(page, 'Acknowledge').isDisabled()).toBe(true);
    const row = async () =>
      (await h.db('error_groups').where({ id: checkoutGroup }).first()) as { state: string; etag: string };
    const acknowledged = await row();
    expect(acknowledged.state).toBe('acknowledged');

    // The stale tab's Resolve carries the old etag: 409, "Conflict" in an alert, nothing changed.
    const [answer] = await Promise.all([
      stale.waitForResponse((r) => r.url().endsWith('/triage')),
      button(stale, 'Resolve').click(),
    ]);
    expect(answer.status()).toBe(409);
    await expect(stale.getByRole('alert').textContent()).resolves.toContain('Conflict');
    await expect(stale.locator('.state').textContent()).resolves.toBe('acknowledged');
    expect(await row()).toEqual(acknowledged);
    expect(await audit(stale)).toEqual([]);
    await stale.screenshot({ path: `${shots}/group-conflict.png`, fullPage: true });

    // From the page as it is now, Resolve and Reopen go through.
    await button(stale, 'Resolve').click();
    await expect(stale.locator('.state').textContent()).resolves.toBe('resolved');
    await button(stale, 'Reopen').click();
    await expect(stale.locator('.state').textContent()).resolves.toBe('unresolved');
    await page.context().close();
  });

  it("shows the code a Sentry SDK sent around a frame, the frame's own line marked and numbered", async () => {
    // An environment of its own, so the other tests' lists stay as they are.
    const other = await createTestEnv(h.db);
    const id = crypto.randomUUID().replace(/-/g, '');
    const event = {
      event_id: id,
      exception: {
        values: [{ type: 'Error', value: 'Error with context lines', stacktrace: { frames: [pageFrame] } }],
      },
    };
    const envelope = [JSON.stringify({ event_id: id }), JSON.stringify({ type: 'event' }), JSON.stringify(event)].join(
      '\n',
    );
    const path = `/api/${other.clientKey.projectNumber}/envelope/?sentry_key=${other.clientKey.publicKey}`;
    expect((await fetch(`${web.url}${path}`, { method: 'POST', body: envelope })).status).toBe(200);
    const group = groupIdOf((await readStored(web, other, id)).body.name);
    const page = await newPage();
    await signIn(page, other.secretKey);
    await page.goto(`${web.url}/console/errors/${group}`);
    const frame = page.locator('.frame').first();
    await expect(frame.locator('.hit').textContent()).resolves.toBe(`7${pageFrame.context_line}\n`);
    await expect(frame.locator('.code').textContent()).resolves.toContain('1<!DOCTYPE html>');
    await expect(frame.locator('.code').textContent()).resolves.toContain('12</html>');
    expect(await audit(page)).toEqual([]);
    await page.context().close();
  });

  it('shows a key without observability:write the group read-only, and refuses its hand-made POST', async () => {
    const key = await createKey(h.db, env.env, 'secret', ['observability:read']);
    const page = await newPage();
    await signIn(page, key.token);
    await page.goto(`${web.url}/console/errors/${checkoutGroup}`);
    for (const name of ['Acknowledge', 'Resolve', 'Reopen'])
      expect(await page.getByRole('button', { name, exact: true }).isDisabled()).toBe(true);
    await expect(page.locator('.actions').textContent()).resolves.toContain('lacks observability:write');
    expect(await audit(page)).toEqual([]);
    const before = await h.db('error_groups').where({ id: checkoutGroup }).first();
    const form = {
      csrf: await page.locator('input[name=csrf]').first().inputValue(),
      etag: await page.locator('input[name=etag]').inputValue(),
      action: 'resolve',
    };
    const posted = await page.request.post(`${web.url}/console/errors/${checkoutGroup}/triage`, {
      form,
      maxRedirects: 0,
    });
    expect(posted.status()).toBe(403);
    expect(await h.db('error_groups').where({ id: checkoutGroup }).first()).toEqual(before);
    await page.context().close();
  });

  it('ends the session when its key is revoked', async () => {
    const key = await createKey(h.db, env.env, 'secret');
    const page = await newPage();
    await signIn(page, key.token);
    // The sign-in's redirect loaded in full before the reload: a reload while Chromium is still
    // swapping the page to the errors page's renderer fails as "not attached to an active page".
    await page.waitForURL('**/console/errors', { waitUntil: 'load' });
    expect(new URL(page.url()).pathname).toBe('/console/errors');
    await tenancyQueries(h.db).revokeKey(key.key.id);
    await page.reload();
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
    await page.context().close();
  });

  it('shows a key without observability:read that it cannot read errors', async () => {
    const key = await createKey(h.db, env.env, 'secret', ['backups:read']);
    const page = await newPage();
    await signIn(page, key.token);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('lacks the scope observability:read');
    expect(await page.locator('tbody tr').count()).toBe(0);
    expect(await audit(page)).toEqual([]);
    await page.context().close();
  });
});
