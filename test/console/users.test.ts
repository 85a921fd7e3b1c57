// The console's Users page in a real headless Chromium: the end users (email, verified, created,
// last sign-in), found by part of their email; a user's sessions and sign-in history; "Revoke
// sessions" ending every session at once after a confirmation page (the tokens stop working); one
// session's "Revoke" leaving the others; "Lock" (confirmed) refusing sign-in until "Unlock";
// "Delete user" only once the email is typed again; a key without auth:write seeing the buttons
// disabled and refused however it posts. Every page passes axe; screenshots in test-results/console/.
import { idleJobs } from '../support/jobs.ts';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import { createKey, type CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { strongPassword } from '../identity/support.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { audit, launchBrowser, newPage, shots, signIn } from './support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let browser: Browser;
let ada: string;
let tokens: string[];

const signInAsUser = (identifier: string, password: string) =>
  call<{ session_token: string }>(web.url, 'POST', '/v1/client/sign-in/password', {
    body: { identifier, password, session_mode: 'browser' },
    headers: { 'cairn-publishable-key': env.publishableKey },
  });
const sessionWorks = async (token: string) =>
  (await call(web.url, 'GET', '/v1/client/session', { key: token })).status === 200;

// At its CAIRN_BASE_URL: the console's forms are refused from any other origin (csrf.ts).
const stack = useWeb({ atBaseUrl: true });
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  ada = (
    await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
      email: 'ada@example.com',
      password: strongPassword,
      email_verified: true,
    })
  ).id;
  await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
    email: 'bob@example.com',
    password: strongPassword,
  });
  expect((await signInAsUser('ada@example.com', 'not the password at all')).status).toBe(401);
  tokens = await Promise.all(
    [0, 1].map(async () => (await signInAsUser('ada@example.com', strongPassword)).body.session_token),
  );
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

describe('the Users page in Chromium', () => {
  it('lists and finds users, shows sessions and sign-ins, and revokes every session of a user', async () => {
    const page = await newPage(browser);
    await signIn(page, web.url, env.secretKey);
    await page.getByRole('link', { name: 'Users', exact: true }).click();
    await expect(page.getByRole('heading', { name: 'Users' }).isVisible()).resolves.toBe(true);
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(2);
    await expect(rows.nth(0).textContent()).resolves.toMatch(/bob@example\.com\s*No[\s\S]*UTC\s*never/);
    await expect(rows.nth(1).textContent()).resolves.toMatch(/ada@example\.com\s*Yes[\s\S]*UTC[\s\S]*UTC/);
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/users.png`, fullPage: true });

    await page.getByLabel('Email contains').fill('ADA@example.com');
    await page.getByRole('button', { name: 'Find' }).click();
    expect(await rows.count()).toBe(1);
    await page.getByLabel('Email contains').fill('@EXAMPLE');
    await page.getByRole('button', { name: 'Find' }).click();
    expect(await rows.count()).toBe(2);
    await page.getByLabel('Email contains').fill('a%');
    await page.getByRole('button', { name: 'Find' }).click();
    await expect(page.locator('main').textContent()).resolves.toContain("No user's email contains a%.");
    await page.getByLabel('Email contains').fill('Ad');
    await page.getByRole('button', { name: 'Find' }).click();
    expect(await rows.count()).toBe(1);

    await page.getByRole('link', { name: 'ada@example.com' }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('ada@example.com');
    const [sessions, signIns] = [page.locator('table').nth(0), page.locator('table').nth(1)];
    expect(await sessions.locator('tbody .state').allTextContents()).toEqual(['active', 'active']);
    await expect(signIns.locator('tbody').textContent()).resolves.toMatch(/password[\s\S]*password/);
    expect(await signIns.locator('tbody tr').count()).toBe(3);
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/user.png`, fullPage: true });

    await page.getByRole('button', { name: 'Revoke sessions' }).click();
    // A page asks first; nothing has ended yet.
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Revoke every session of ada@example.com?',
    );
    expect(await audit(page)).toEqual([]);
    for (const t of tokens) expect(await sessionWorks(t)).toBe(true);
    await page.getByRole('button', { name: 'Revoke sessions' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('2 sessions revoked.');
    expect(await page.locator('table').nth(0).locator('tbody .state').allTextContents()).toEqual([
      'revoked',
      'revoked',
    ]);
    for (const t of tokens) expect(await sessionWorks(t)).toBe(false);
    expect(await audit(page)).toEqual([]);
    await page.context().close();
  });

  it('shows a key without auth:write the button disabled, and refuses its posts, and a post without CSRF', async () => {
    const token = (await signInAsUser('ada@example.com', strongPassword)).body.session_token;
    const key = await createKey(h.db, env.env, 'secret', ['auth:read']);
    const page = await newPage(browser);
    await signIn(page, web.url, key.token);
    await page.goto(`${web.url}/console/users/${ada}`);
    for (const name of ['Revoke sessions', 'Lock', 'Delete'])
      expect(await page.getByRole('button', { name }).isDisabled()).toBe(true);
    await expect(page.locator('main').textContent()).resolves.toContain('lacks auth:write');
    expect(await audit(page)).toEqual([]);
    const csrf = await page.locator('input[name=csrf]').first().inputValue();
    const post = (form: Record<string, string>, action = 'revoke-sessions') =>
      page.request.post(`${web.url}/console/users/${ada}/${action}`, { form, maxRedirects: 0 });
    expect((await post({ csrf })).status()).toBe(403);
    expect((await post({})).status()).toBe(403);
    for (const action of ['lock', 'unlock', 'delete'])
      expect((await post({ csrf, confirm: 'ada@example.com' }, action)).status()).toBe(403);
    expect((await page.goto(`${web.url}/console/users/${ada}/delete`))!.status()).toBe(403);
    expect(await sessionWorks(token)).toBe(true);
    await page.context().close();
  });
  it('revokes one session, locks and unlocks after a confirmation, and deletes once the email is typed', async () => {
    const [kept, ended] = [
      (await signInAsUser('ada@example.com', strongPassword)).body.session_token,
      (await signInAsUser('ada@example.com', strongPassword)).body.session_token,
    ];
    const page = await newPage(browser);
    await signIn(page, web.url, env.secretKey);
    await page.goto(`${web.url}/console/users/${ada}`);
    const states = () => page.locator('table').nth(0).locator('tbody .state').allTextContents();
    expect((await states()).slice(0, 2)).toEqual(['active', 'active']);
    // The newest session is the first row, and the one `ended` names.
    await page
      .locator('table')
      .nth(0)
      .locator('tbody tr')
      .first()
      .getByRole('button', { name: /^Revoke session/ })
      .click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('1 session revoked.');
    expect((await states()).slice(0, 2)).toEqual(['revoked', 'active']);
    expect(await sessionWorks(ended)).toBe(false);
    expect(await sessionWorks(kept)).toBe(true);

    await page.getByRole('button', { name: 'Lock ada@example.com' }).click();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Lock ada@example.com?');
    expect(await sessionWorks(kept)).toBe(true);
    await page.getByRole('button', { name: 'Lock user' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Locked; \d+ sessions? revoked\.$/);
    await expect(page.locator('main p').nth(1).textContent()).resolves.toContain('locked since');
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/user-locked.png`, fullPage: true });
    expect(await sessionWorks(kept)).toBe(false);
    expect(await signInAsUser('ada@example.com', strongPassword)).toMatchObject({
      status: 403,
      body: { details: { reason: 'user_locked' } },
    });
    await page.goto(`${web.url}/console/users?email=ada`);
    await expect(page.locator('tbody tr').first().textContent()).resolves.toContain('locked');
    await page.goto(`${web.url}/console/users/${ada}`);
    await page.getByRole('button', { name: 'Unlock' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('Unlocked: the user can sign in again.');
    expect((await signInAsUser('ada@example.com', strongPassword)).status).toBe(200);

    await page.getByRole('button', { name: 'Delete user ada@example.com' }).click();
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/user-confirm-delete.png`, fullPage: true });
    await page.getByLabel("Type the user's email to confirm").fill('bob@example.com');
    await page.getByRole('button', { name: 'Delete user' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('Nothing was deleted.');
    expect((await call(web.url, 'GET', `/v1/${env.env.name}/end_users/${ada}`, { key: env.secretKey })).status).toBe(
      200,
    );
    await page.getByLabel("Type the user's email to confirm").fill(' ADA@example.com ');
    await page.getByRole('button', { name: 'Delete user' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe('User deleted.');
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect((await call(web.url, 'GET', `/v1/${env.env.name}/end_users/${ada}`, { key: env.secretKey })).status).toBe(
      404,
    );
    expect(await signInAsUser('ada@example.com', strongPassword)).toMatchObject({ status: 401 });
    await page.context().close();
  });
});
