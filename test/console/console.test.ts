// The console in a real headless Chromium (Debian's chromium, driven by playwright-core): signing
// in with a secret key (a wrong one sets no cookie), the errors page, sign-out, a POST without its
// CSRF token, and a revoked key ending the session. Every page passes an axe-core audit (no serious
// or critical violation). Screenshots go to test-results/console/ (gitignored).
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey } from '../../src/domain/tenancy/envs.ts';
import { tenancyQueries } from '../../src/domain/tenancy/queries.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { handlers } from '../../workers/handlers.ts';
import { queues } from '../../src/jobs.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { createTestEnv, type Harness } from '../support/harness.ts';
import { capture, readStored, sampleEvent } from '../observability/support.ts';
import { harnessWithWeb } from '../social/support.ts';

const shots = 'test-results/console';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<typeof queues>;
let env: CreatedEnv;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  ({ h, web } = await harnessWithWeb());
  worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  env = await createTestEnv(h.db);
  for (const e of [
    sampleEvent(),
    sampleEvent({ exception_type: 'RangeError', message: 'Invalid array length', service_name: 'billing' }),
  ])
    await readStored(web, env, await capture(web, env, e));
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await web?.stop();
  await h?.close();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  return context.newPage();
}

/** axe-core's default rules on the page as it is; evaluated over CDP, so the page's CSP still holds for its own content. */
async function audit(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run: () => Promise<{ violations: { id: string; impact: string }[] }> } }
    ).axe;
    return (await axe.run()).violations.map((v) => `${v.impact}: ${v.id}`);
  });
  return result.filter((v) => v.startsWith('serious') || v.startsWith('critical'));
}

const sessionCookie = async (page: Page) =>
  (await page.context().cookies()).find((c) => c.name === 'cairn_console_session');

async function signIn(page: Page, key: string): Promise<void> {
  await page.goto(`${web.url}/console`);
  await page.getByLabel('Secret key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

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
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(cookie!.value).not.toContain(env.secretKey.slice(-12));
    await expect(page.getByRole('heading', { name: 'Errors' }).isVisible()).resolves.toBe(true);
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(2);
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

  it('ends the session when its key is revoked', async () => {
    const key = await createKey(h.db, env.env, 'secret');
    const page = await newPage();
    await signIn(page, key.token);
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
