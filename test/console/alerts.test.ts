// The console's Alerts page in a real headless Chromium: the rules with their last firing (time and
// the group's title, linking to the group), a rule created by the form (a refused one coming back
// with its reasons and what was typed), "Delete"; a key without observability:write seeing the
// controls disabled and refused however it posts. Axe passes at 1100 and 390 px, and the page does
// not scroll sideways on a phone. Screenshots in test-results/console/.
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredAction } from '../../src/domain/alerts/rules/queries.ts';
import { createKey, type CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { newId } from '../../src/ids.ts';
import { call, createTestEnv, useWeb } from '../support/harness.ts';
import { audit, launchBrowser, newPage, shots, signIn } from './support.ts';

let env: CreatedEnv;
let browser: Browser;
let group: string;
let fired: string;

// At its CAIRN_BASE_URL: the console's forms are refused from any other origin (csrf.ts).
const stack = useWeb({ atBaseUrl: true });
beforeAll(async () => {
  env = await createTestEnv(stack.h.db);
  group = newId('eg');
  await stack.h.db('error_groups').insert({
    id: group,
    env_id: env.env.id,
    fingerprint: randomBytes(16).toString('hex'),
    title: 'TypeError: cart is <undefined>',
    etag: randomBytes(8).toString('hex'),
    first_seen_time: new Date(),
    last_seen_time: new Date(),
    occurrence_count: 1,
    grouping: JSON.stringify({ method: 'message', frames: [] }),
  });
  const rule = await call<{ id: string }>(stack.web.url, 'POST', `/v1/${env.env.name}/alert_rules`, {
    key: env.secretKey,
    body: {
      name: 'Checkout bursts',
      when: 'frequency',
      threshold: { events: 100, window_minutes: 60 },
      q: 'service:checkout',
      actions: [
        { type: 'email', to: ['oncall@example.com'] },
        { type: 'slack', url: 'http://127.0.0.1:9/services/T/B/consoleToken42' },
      ],
    },
  });
  fired = rule.body.id;
  // As the worker records a firing (domain/alerts/fire/).
  await stack.h.db('alert_firings').insert({
    id: newId('alf'),
    rule_id: fired,
    env_id: env.env.id,
    group_id: group,
    reason: 'frequency',
    facts: JSON.stringify({}),
    time: '2026-12-06T10:05:00Z',
  });
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

/** No sideways scroll: the page is no wider than the viewport. */
const overflow = (page: Page) =>
  page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth') as Promise<number>;

async function auditBothWidths(page: Page, name: string): Promise<void> {
  expect(await audit(page)).toEqual([]);
  await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await audit(page)).toEqual([]);
  expect(await overflow(page)).toBeLessThanOrEqual(0);
  await page.screenshot({ path: `${shots}/${name}-390.png`, fullPage: true });
  await page.setViewportSize({ width: 1100, height: 800 });
}

const rows = (page: Page) => page.locator('tbody tr');

describe('the Alerts page in Chromium', () => {
  it('lists rules with their last firing, creates a rule from the form, and deletes one', async () => {
    const page = await newPage(browser);
    await signIn(page, stack.web.url, env.secretKey);
    await page.getByRole('link', { name: 'Alerts', exact: true }).click();
    await expect(page.getByRole('heading', { name: 'Alerts', level: 1 }).isVisible()).resolves.toBe(true);
    expect(await rows(page).count()).toBe(1);
    const first = (await rows(page).nth(0).textContent()) ?? '';
    expect(first).toContain('Checkout bursts');
    expect(first).toContain('100+ events within 60 min');
    expect(first).toContain('Slack http://127.0.0.1:9/…en42');
    expect(first).toContain('2026-12-06 10:05 UTC');
    expect(first).not.toContain('consoleToken42');
    const link = page.getByRole('link', { name: 'TypeError: cart is <undefined>' });
    expect(await link.getAttribute('href')).toBe(`/console/errors/${group}`);
    await auditBothWidths(page, 'alerts');

    // A refusal: the reasons in the form's words, what was typed kept (not the Slack URL).
    await page.getByLabel('Name', { exact: true }).fill('New groups');
    await page.getByLabel('Email addresses').fill('ops@example.com, not-an-address');
    await page.getByLabel('Only errors matching').fill('release:"1.0');
    await page.getByLabel('Slack incoming-webhook URL').fill('http://127.0.0.1:9/services/T/B/typedToken');
    await page.getByRole('button', { name: 'Create rule' }).click();
    const refusal = (await page.getByRole('alert').textContent()) ?? '';
    expect(refusal).toContain('Email addresses: not-an-address is not a valid address.');
    await expect(page.getByLabel('Email addresses').inputValue()).resolves.toBe('ops@example.com, not-an-address');
    await expect(page.getByLabel('Slack incoming-webhook URL').inputValue()).resolves.toBe('');
    await auditBothWidths(page, 'alerts-refused');

    // The search is the API's: its parser's words, named by the form's label.
    await page.getByLabel('Email addresses').fill('ops@example.com');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain(
      'Only errors matching: term "release:\\"1.0": the quote is not closed',
    );

    await page.getByLabel('Only errors matching').fill('is:unresolved');
    await page.getByLabel('When').selectOption('regression');
    await page.getByLabel('Slack incoming-webhook URL').fill('http://127.0.0.1:9/services/T/B/typedToken');
    await page.getByRole('button', { name: 'Create rule' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Rule alr_[0-9a-z]{26} created\.$/);
    expect(await rows(page).count()).toBe(2);
    const created = (await rows(page).nth(1).textContent()) ?? '';
    expect(created).toContain('New groups');
    expect(created).toContain('A resolved group comes back');
    expect(created).toContain('never');
    const stored = (await stack.h.db('alert_rules').where({ env_id: env.env.id, name: 'New groups' }).first()) as {
      q: string;
      actions: StoredAction[];
      snooze_minutes: number;
    };
    expect(stored).toMatchObject({ q: 'is:unresolved', snooze_minutes: 30 });
    expect(stored.actions).toEqual([
      { type: 'email', to: ['ops@example.com'] },
      { type: 'slack', url_sealed: expect.any(String), url_hint: 'http://127.0.0.1:9/…oken' },
    ]);

    await page.getByRole('button', { name: 'Delete the rule New groups' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Rule alr_[0-9a-z]{26} deleted\.$/);
    expect(await rows(page).count()).toBe(1);
    await page.context().close();
  });

  it('shows a key without observability:write its controls disabled, and refuses its posts', async () => {
    const key = await createKey(stack.h.db, env.env, 'secret', ['observability:read']);
    const page = await newPage(browser);
    await signIn(page, stack.web.url, key.token);
    await page.goto(`${stack.web.url}/console/alerts`);
    expect(await page.getByRole('button', { name: 'Create rule' }).isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Delete the rule Checkout bursts' }).isDisabled()).toBe(true);
    expect(await page.getByLabel('Name', { exact: true }).isDisabled()).toBe(true);
    await expect(page.locator('main').textContent()).resolves.toContain('lacks observability:write');
    await auditBothWidths(page, 'alerts-read-only');

    const csrf = await page.locator('input[name=csrf]').first().inputValue();
    const post = (path: string, form: Record<string, string>) =>
      page.request.post(`${stack.web.url}${path}`, { form, maxRedirects: 0 });
    const create = await post('/console/alerts', { csrf, name: 'x', when: 'new_group', emails: 'a@example.com' });
    expect(create.status()).toBe(403);
    expect(await create.text()).toContain('lacks the scope observability:write');
    expect((await post(`/console/alerts/${fired}/delete`, { csrf })).status()).toBe(403);
    expect((await post(`/console/alerts/${fired}/delete`, {})).status()).toBe(403);
    expect(await stack.h.db('alert_rules').where({ env_id: env.env.id }).count<{ n: string }[]>('* as n')).toEqual([
      { n: '1' },
    ]);
    await page.context().close();
  });
});
