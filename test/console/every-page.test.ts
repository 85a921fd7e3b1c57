// Every page of the console, and the Account Portal's pages a visitor reaches without a flow, in a
// real headless Chromium at desktop (1100 px) and phone (390 px) widths: no serious or critical
// axe-core violation at either, and no sideways scroll at 390 px. One row of `pages` per page (and
// per state a page can be in); a new page is one more row. The landing page (`/`) and the documents
// (`/docs`) wear the console's look and are audited with it. Screenshots in test-results/console/.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queues } from '../../src/queues.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { useWeb } from '../support/harness.ts';
import { makeFixtures, type Fixtures, type Visitor } from './every-page-support.ts';
import { audit, launchBrowser, shots } from './support.ts';

interface Visit {
  /** What the page shows; its screenshots' name too. */
  name: string;
  path: (f: Fixtures) => string;
  /** Signed in as the operator unless said. */
  as?: Visitor;
  /** The page's HTTP status (200 unless said). */
  status?: number;
  /** What the visitor does on the page before it is audited (the audit is of the page it ends on). */
  then?: (page: Page, f: Fixtures) => Promise<void>;
}

const openEvery = async (page: Page, selector: string) => {
  for (const d of await page.locator(selector).all()) await d.evaluate((e) => e.setAttribute('open', ''));
};
const signOut = async (page: Page) => {
  await Promise.all([page.waitForURL(/\/console\/sign-in$/), page.getByRole('button', { name: 'Sign out' }).click()]);
};
const wrongKey = async (page: Page) => {
  await page.getByLabel('Secret key').fill('cairn_sk_test_' + 'x'.repeat(32));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').waitFor();
};
const refusedRestore = async (page: Page) => {
  await openEvery(page, 'details');
  await page.getByLabel("Type the target environment's full name to confirm").first().fill('not its name');
  await page.getByRole('button', { name: 'Restore', exact: true }).first().click();
  await page.getByRole('alert').waitFor();
  await openEvery(page, 'details');
};
const refusedRule = async (page: Page) => {
  await page.getByLabel('Name', { exact: true }).fill('Refused');
  await page.getByLabel('When').selectOption('frequency');
  await page.getByLabel('Email addresses').fill('ops@example.com not-an-address');
  await page.getByRole('button', { name: 'Create rule' }).click();
  await page.getByRole('alert').waitFor();
};
const refusedDelete = async (page: Page) => {
  await page.getByLabel("Type the user's email to confirm").fill('not its email');
  await page.getByRole('button', { name: 'Delete user' }).click();
  await page.getByRole('alert').waitFor();
};
/** Another client acknowledges the group after the page loaded; the page's Resolve then meets a 409. */
const conflict = async (page: Page, f: Fixtures) => {
  await f.triage(f.conflicted, 'acknowledge');
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/triage')),
    page.getByRole('button', { name: 'Resolve', exact: true }).click(),
  ]);
  expect(answer.status()).toBe(409);
  await expect(page.getByRole('alert').textContent()).resolves.toContain('Conflict');
};
const portal = (path: string) => (f: Fixtures) =>
  `${path}${path.includes('?') ? '&' : '?'}publishable_key=${f.env.publishableKey}`;

const pages: Visit[] = [
  { name: 'sign-in', path: () => '/console', as: 'nobody' },
  { name: 'sign-in-wrong-key', path: () => '/console/sign-in', as: 'nobody', then: wrongKey },
  { name: 'landing', path: () => '/', as: 'nobody' },
  { name: 'docs', path: () => '/docs', as: 'nobody' },
  { name: 'doc', path: () => '/docs/conventions.md', as: 'nobody' },
  { name: 'doc-in-a-folder', path: () => '/docs/architecture/console.md', as: 'nobody' },
  { name: 'doc-not-found', path: () => '/docs/..%2fpackage.json', as: 'nobody', status: 404 },
  { name: 'sign-in-link', path: (f) => f.link, as: 'nobody' },
  { name: 'sign-in-link-switch', path: (f) => f.link },
  { name: 'sign-in-link-used', path: (f) => f.usedLink, as: 'nobody', status: 410 },
  { name: 'errors', path: () => '/console/errors' },
  { name: 'errors-search', path: () => '/console/errors?q=PaymentError' },
  { name: 'errors-search-sorted', path: () => '/console/errors?q=%22card+declined%22&state=all&sort=events' },
  { name: 'errors-search-not-valid', path: () => '/console/errors?q=%21card', status: 400 },
  { name: 'errors-resolved', path: () => '/console/errors?state=resolved' },
  { name: 'errors-all-of-a-service', path: () => '/console/errors?state=all&service=billing' },
  { name: 'errors-none', path: () => '/console/errors?state=acknowledged' },
  {
    name: 'errors-after-bulk-with-stale',
    path: (f) => `/console/errors?state=all&done=resolve&changed=1&stale=${f.group}`,
    then: async (page, f) => {
      const stale = page.getByRole('alert');
      await expect(stale.textContent()).resolves.toMatch(/^Changed since the page was loaded.*PaymentError/);
      await expect(stale.getByRole('link').getAttribute('href')).resolves.toBe(`/console/errors/${f.group}`);
      await expect(page.getByRole('status').textContent()).resolves.toBe('Resolved 1 error.');
    },
  },
  { name: 'errors-lacks-scope', path: () => '/console/errors', as: 'backupsReader', status: 403 },
  { name: 'group', path: (f) => `/console/errors/${f.group}`, then: (p) => openEvery(p, 'details') },
  { name: 'group-read-only', path: (f) => `/console/errors/${f.group}`, as: 'errorsReader' },
  { name: 'group-resolved', path: (f) => `/console/errors/${f.resolved}` },
  { name: 'group-conflict', path: (f) => `/console/errors/${f.conflicted}`, then: conflict },
  { name: 'event', path: (f) => `/console/errors/${f.group}/events/${f.uid}`, then: (p) => openEvery(p, 'details') },
  { name: 'alerts', path: () => '/console/alerts' },
  { name: 'alerts-created', path: (f) => `/console/alerts?created=${f.rule}` },
  { name: 'alerts-refused', path: () => '/console/alerts', then: refusedRule },
  { name: 'alerts-read-only', path: () => '/console/alerts', as: 'errorsReader' },
  { name: 'alerts-lacks-scope', path: () => '/console/alerts', as: 'backupsReader', status: 403 },
  { name: 'users', path: () => '/console/users' },
  { name: 'users-found', path: () => '/console/users?email=ada%40example.com' },
  { name: 'users-found-by-part', path: () => '/console/users?email=ADA' },
  { name: 'users-none-found', path: () => '/console/users?email=nobody%40example.com' },
  { name: 'users-deleted', path: () => '/console/users?deleted=1' },
  { name: 'user', path: (f) => `/console/users/${f.user}` },
  { name: 'user-locked', path: (f) => `/console/users/${f.lockedUser}?locked=1` },
  { name: 'user-unlocked', path: (f) => `/console/users/${f.user}?unlocked=1` },
  { name: 'user-confirm-revoke-sessions', path: (f) => `/console/users/${f.user}/revoke-sessions` },
  { name: 'user-confirm-lock', path: (f) => `/console/users/${f.user}/lock` },
  { name: 'user-confirm-delete', path: (f) => `/console/users/${f.user}/delete` },
  {
    name: 'user-confirm-delete-refused',
    path: (f) => `/console/users/${f.user}/delete`,
    then: refusedDelete,
  },
  { name: 'user-confirm-lacks-scope', path: (f) => `/console/users/${f.user}/lock`, as: 'backupsReader', status: 403 },
  { name: 'users-lacks-scope', path: () => '/console/users', as: 'backupsReader', status: 403 },
  { name: 'backups', path: () => '/console/backups', then: (p) => openEvery(p, 'details') },
  { name: 'backups-started', path: (f) => `/console/backups?started=${f.backup}` },
  { name: 'backups-restore-refused', path: () => '/console/backups', then: refusedRestore },
  {
    name: 'backups-read-only',
    path: () => '/console/backups',
    as: 'backupsReader',
    then: (p) => openEvery(p, 'details'),
  },
  { name: 'operation-running', path: (f) => `/console/operations/${f.ops.running}` },
  { name: 'operation-succeeded', path: (f) => `/console/operations/${f.ops.succeeded}` },
  { name: 'operation-failed', path: (f) => `/console/operations/${f.ops.failed}` },
  { name: 'not-found', path: () => '/console/errors/eg_00000000000000000000000000', status: 404 },
  { name: 'page-link-not-valid', path: () => '/console/errors?after=not-a-position', status: 400 },
  { name: 'signed-out', path: () => '/console/errors', then: signOut },
  { name: 'portal-sign-in', path: portal('/sign-in'), as: 'nobody' },
  { name: 'portal-sign-up', path: portal('/sign-up'), as: 'nobody' },
  { name: 'portal-device', path: () => '/device', as: 'nobody' },
  { name: 'portal-email-confirmed', path: () => '/verify-email?email_verified=true', as: 'nobody' },
  { name: 'portal-link-not-valid', path: () => '/verify-email?status=invalid', as: 'nobody', status: 400 },
];

const stack = useWeb({ atBaseUrl: true });
let worker: WorkerHandle<typeof queues>;
let browser: Browser;
let f: Fixtures;

beforeAll(async () => {
  worker = await startWorker(stack.h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  f = await makeFixtures(stack.h, stack.web);
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
});

/** How far the page is wider than the viewport (what a phone would scroll sideways), and the innermost elements that stick out. */
const sideways = (page: Page) =>
  page.evaluate(`(() => {
    const out = (e) => e.getBoundingClientRect().left + e.scrollWidth > innerWidth + 0.5;
    const culprits = [...document.body.querySelectorAll('*')]
      .filter((e) => out(e) && ![...e.children].some(out))
      .slice(0, 5)
      .map((e) => e.tagName.toLowerCase() + ': ' + (e.textContent ?? '').trim().slice(0, 60));
    return { by: document.scrollingElement.scrollWidth - innerWidth, culprits };
  })()`) as Promise<{ by: number; culprits: string[] }>;

describe('every page in Chromium', () => {
  it.each(pages)('$name passes axe at 1100 and 390 px and fits 390 px', async (visit) => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    const who = visit.as ?? 'operator';
    if (who !== 'nobody')
      await context.addCookies([
        { name: 'cairn_console_session', value: await f.session(who), domain: '127.0.0.1', path: '/console' },
      ]);
    const page = await context.newPage();
    const answer = await page.goto(`${stack.web.url}${visit.path(f)}`);
    expect(answer!.status()).toBe(visit.status ?? 200);
    await visit.then?.(page, f);
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/every-${visit.name}.png`, fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await audit(page)).toEqual([]);
    const wide = await sideways(page);
    expect(wide.by, `wider than 390 px: ${wide.culprits.join(' | ')}`).toBeLessThanOrEqual(0);
    await page.screenshot({ path: `${shots}/every-${visit.name}-390.png`, fullPage: true });
    await context.close();
  });
});
