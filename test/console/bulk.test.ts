// Bulk triage on the console's errors page in a real headless Chromium: checkboxes named by the
// groups' titles, "Resolve selected", "Acknowledge selected" and "Reopen selected" posting the
// etags the page showed, the answer back on the same list (its query kept) with the group the API
// changed meanwhile named in an alert and left as it was. The page passes axe at desktop and at
// phone width (390 px), where it does not scroll sideways, and starts with a skip link.
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/ids.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { call, createTestEnv, useWeb } from '../support/harness.ts';
import { envBase } from '../errors/support.ts';
import { audit, launchBrowser, shots, signIn } from './support.ts';

const stack = useWeb({ atBaseUrl: true });
let env: CreatedEnv;
let browser: Browser;
const ids: Record<string, string> = {};

/** The groups, newest last seen first: [title, service]; one has no service. */
const made: [string, string][] = [
  ['TypeError: alpha is undefined', 'shop'],
  ['RangeError: beta out of range', 'shop'],
  ['Error: gamma without a service', ''],
  ['SyntaxError: delta', 'api'],
];

beforeAll(async () => {
  env = await createTestEnv(stack.h.db);
  const base = Date.now();
  for (const [i, [title, service]] of made.entries()) {
    ids[title] = newId('eg');
    await stack.h.db('error_groups').insert({
      id: ids[title],
      env_id: env.env.id,
      fingerprint: randomBytes(16).toString('hex'),
      title,
      service_name: service,
      etag: randomBytes(8).toString('hex'),
      first_seen_time: new Date(base - (i + 1) * 60_000),
      last_seen_time: new Date(base - (i + 1) * 60_000),
      occurrence_count: 1,
      grouping: JSON.stringify({ method: 'message', frames: [] }),
    });
  }
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const row = async (title: string) =>
  (await stack.h.db('error_groups').where({ id: ids[title] }).first('state', 'etag')) as {
    state: string;
    etag: string;
  };

async function pageAt(width: number): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 800 } });
  const page = await context.newPage();
  await signIn(page, stack.web.url, env.secretKey);
  await page.goto(`${stack.web.url}/console/errors?state=all`);
  return page;
}

/** Checks the rows by title, presses the button and waits for the list it redirects back to. */
async function bulk(page: Page, button: string, titles: string[]): Promise<URL> {
  for (const title of titles) await page.getByRole('checkbox', { name: title, exact: true }).check();
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/console/errors' && u.searchParams.has('done')),
    page.getByRole('button', { name: button, exact: true }).click(),
  ]);
  return new URL(page.url());
}

describe('bulk triage on the errors page', () => {
  it('resolves, acknowledges and reopens the checked rows, naming the one the API changed meanwhile', async () => {
    const page = await pageAt(1100);
    const [alpha, beta, gamma] = made.map(([t]) => t);
    expect(await page.getByRole('checkbox').count()).toBe(4);
    // A group without a service shows a dash, not an empty link; one with a service links to its errors.
    expect(await page.locator('tbody a').evaluateAll((as) => as.filter((a) => !a.textContent?.trim()).length)).toBe(0);
    const headers = await page.getByRole('columnheader').allTextContents();
    const serviceOf = (title: string) =>
      page
        .getByRole('row')
        .filter({ has: page.getByRole('checkbox', { name: title, exact: true }) })
        .getByRole('cell')
        .nth(headers.indexOf('Service'));
    await expect(serviceOf(gamma!).textContent()).resolves.toBe('—');
    expect(await serviceOf(gamma!).getByRole('link').count()).toBe(0);
    await expect(serviceOf(alpha!).getByRole('link').textContent()).resolves.toBe('shop');
    expect(await audit(page)).toEqual([]);

    // Between page load and submit, beta is acknowledged through the API: its etag on the page is stale.
    const before = await row(beta!);
    const api = await call(stack.web.url, 'POST', `${envBase(env)}/error_groups/${ids[beta!]}:acknowledge`, {
      key: env.secretKey,
      body: { etag: before.etag },
    });
    expect(api.status).toBe(200);
    const changed = await row(beta!);

    const back = await bulk(page, 'Resolve selected', [alpha!, beta!]);
    expect(back.searchParams.get('state')).toBe('all');
    await expect(page.getByRole('status').textContent()).resolves.toBe('Resolved 1 error.');
    const alertText = await page.getByRole('alert').textContent();
    expect(alertText).toContain(`Changed since the page was loaded, so left as they are: ${beta}.`);
    expect(alertText).not.toContain(alpha);
    expect((await row(alpha!)).state).toBe('resolved');
    expect(await row(beta!)).toEqual(changed);
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/errors-bulk.png`, fullPage: true });

    await bulk(page, 'Acknowledge selected', [gamma!]);
    await expect(page.getByRole('status').textContent()).resolves.toBe('Acknowledged 1 error.');
    expect(await page.getByRole('alert').count()).toBe(0);
    expect((await row(gamma!)).state).toBe('acknowledged');

    // The page now shows alpha resolved and gamma acknowledged, with their new etags.
    await bulk(page, 'Reopen selected', [alpha!, gamma!]);
    await expect(page.getByRole('status').textContent()).resolves.toBe('Reopened 2 errors.');
    expect((await row(alpha!)).state).toBe('unresolved');
    expect((await row(gamma!)).state).toBe('unresolved');

    // Nothing checked: the page says so and nothing changes.
    await bulk(page, 'Resolve selected', []);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Select the errors to resolve first.');
    await page.context().close();
  });

  it('fits a 390 px wide phone without scrolling sideways, passes axe, and skips to the content', async () => {
    const page = await pageAt(390);
    expect(await audit(page)).toEqual([]);
    const widths = await page.evaluate<{ scroll: number; inner: number }>(
      '({ scroll: document.scrollingElement.scrollWidth, inner: innerWidth })',
    );
    expect(widths.scroll).toBeLessThanOrEqual(widths.inner);
    await page.screenshot({ path: `${shots}/errors-phone.png`, fullPage: true });

    // The first Tab reaches "Skip to content"; following it puts focus on the page's main content.
    await page.keyboard.press('Tab');
    await expect(page.evaluate('document.activeElement.textContent')).resolves.toBe('Skip to content');
    await page.keyboard.press('Enter');
    await expect(page.evaluate('document.activeElement.tagName')).resolves.toBe('MAIN');
    await page.context().close();
  });
});
