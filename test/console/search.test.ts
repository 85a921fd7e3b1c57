// The errors page's search and sort in a real headless Chromium: the "Search" field takes the
// API's language, the "Sort" control orders the table, both survive the state chips, and a refused
// search is shown in an alert (answered 400) with the page still there. Every state passes axe.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capture, readStored, sampleEvent, useStack } from '../errors/support.ts';
import { audit, launchBrowser, newPage, shots, signIn } from './support.ts';

const t = useStack();
let browser: Browser;

beforeAll(async () => {
  const events = [
    ...['2026-11-20T10:00:00Z', '2026-11-21T10:00:00Z', '2026-11-22T10:00:00Z'].map((at) =>
      sampleEvent({ event_time: at }),
    ),
    sampleEvent({ event_time: '2026-11-23T10:00:00Z', exception_type: 'RangeError', message: 'Invalid array length' }),
    ...['2026-11-18T10:00:00Z', '2026-11-19T10:00:00Z'].map((at) =>
      sampleEvent({ event_time: at, exception_type: 'SyntaxError', message: 'Unexpected token <' }),
    ),
  ];
  for (const e of events) await readStored(t.s.web, t.env, await capture(t.s.web, t.env, e));
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

/** The error titles of the table, top to bottom. */
const titles = (page: Page) => page.locator('tbody a.title').allTextContents();

describe('the errors page', () => {
  it('searches and sorts, and keeps both across the state chips and in the form', async () => {
    const page = await newPage(browser);
    await signIn(page, t.s.web.url, t.env.secretKey);
    await page.waitForURL('**/console/errors');
    expect(await titles(page)).toEqual([
      'RangeError: Invalid array length',
      "TypeError: Cannot read properties of undefined (reading 'id')",
      'SyntaxError: Unexpected token <',
    ]);
    const heads = await page.locator('thead th').allTextContents();
    expect(heads).toEqual(expect.arrayContaining(['Events', 'Users', 'First seen', 'Last seen']));

    await page.getByLabel('Sort').selectOption({ label: 'Events' });
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/sort=events/);
    expect(await titles(page)).toEqual([
      "TypeError: Cannot read properties of undefined (reading 'id')",
      'SyntaxError: Unexpected token <',
      'RangeError: Invalid array length',
    ]);
    await page.getByLabel('Sort').selectOption({ label: 'First seen' });
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/sort=first_seen/);
    expect((await titles(page))[0]).toBe('RangeError: Invalid array length');

    await page.getByLabel('Search').fill('"unexpected TOKEN" is:unresolved');
    await page.getByLabel('Sort').selectOption({ label: 'Users' });
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/sort=users/);
    expect(await titles(page)).toEqual(['SyntaxError: Unexpected token <']);
    expect(await page.getByLabel('Search').inputValue()).toBe('"unexpected TOKEN" is:unresolved');
    expect(await page.locator('#sort option:checked').textContent()).toBe('Users');
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/errors-search.png`, fullPage: true });

    await page.getByRole('link', { name: 'All', exact: true }).click();
    await page.waitForURL(/state=all/);
    expect(await titles(page)).toEqual(['SyntaxError: Unexpected token <']);
    expect(page.url()).toContain('sort=users');

    await page.getByLabel('Search').fill('nothing-like-this');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No errors match the search.').waitFor();
    await page.close();
  });

  it('shows a refused search in an alert, with the form to fix it, answered 400', async () => {
    const page = await newPage(browser);
    await signIn(page, t.s.web.url, t.env.secretKey);
    await page.waitForURL('**/console/errors');
    await page.getByLabel('Search').fill('TypeError browser:');
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().includes('/console/errors?')),
      page.getByRole('button', { name: 'Apply' }).click(),
    ]);
    expect(answer.status()).toBe(400);
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'The search is not valid: term "browser:": browser: needs a value',
    );
    expect(await page.getByLabel('Search').inputValue()).toBe('TypeError browser:');
    expect(await page.locator('table').count()).toBe(0);
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/errors-search-refused.png`, fullPage: true });
    await page.close();
  });
});
