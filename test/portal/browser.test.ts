// End to end in a real headless Chromium (Debian's chromium, driven by playwright-core): sign in
// on the Account Portal with a password and the TOTP step, sign in through a local provider, and
// approve a device. Screenshots go to test-results/portal/ (gitignored).
import { idleJobs } from '../support/jobs.ts';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { activateTotp, enrollTotp } from '../../src/domain/identity/factors/totp.ts';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import { createOAuthClient } from '../../src/domain/oauth/clients.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { startIdp, type Idp } from '../support/idp.ts';
import { strongPassword } from '../identity/support.ts';

const shots = 'test-results/portal';
let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let google: Idp;
let browser: Browser;
let appServer: Server;
let appUrl: string;

beforeAll(async () => {
  mkdirSync(shots, { recursive: true });
  google = await startIdp('google', {
    sub: 'g-browser',
    email: 'hedy@example.com',
    email_verified: true,
    name: 'Hedy Lamarr',
  });
  google.interactive = true;
});
afterAll(async () => {
  await google?.close();
});
// At its CAIRN_BASE_URL: the browser follows its links and the provider calls it back there.
const stack = useWeb({ atBaseUrl: true }, () => ({
  CAIRN_GOOGLE_CLIENT_ID: google.clientId,
  CAIRN_GOOGLE_CLIENT_SECRET: google.clientSecret,
  CAIRN_GOOGLE_ISSUER: google.url,
}));
beforeAll(async () => {
  ({ h, web } = stack);
  // The application: its sign-in return page only says it got a ticket.
  appServer = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      `<!doctype html><title>App</title><h1>App received ${new URL(req.url ?? '/', 'http://x').searchParams.has('auth_ticket') ? 'a ticket' : 'nothing'}</h1>`,
    );
  });
  await new Promise<void>((r) => appServer.listen(0, '127.0.0.1', r));
  appUrl = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}/auth/done`;
  env = await createTestEnv(h.db);
  await call(web.url, 'PUT', `/v1/${env.env.name}/identity_settings`, {
    key: env.secretKey,
    body: { branding: { name: 'Northwind', colors: { primary: '#0b6e4f' } }, redirect_urls: [appUrl] },
  });
  await call(web.url, 'PUT', `/v1/${env.env.name}/social_providers/google`, { key: env.secretKey, body: {} });
  browser = await launchChromium(['--disable-quic', '--disable-component-update', '--disable-sync']);
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await new Promise<void>((r) => (appServer ? appServer.close(() => r()) : r()));
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 900, height: 760 } });
  return context.newPage();
}

const ticketOf = (page: Page) => new URL(page.url()).searchParams.get('auth_ticket');
const redeem = (ticket: string) =>
  call(web.url, 'POST', '/v1/client/tickets:redeem', { key: env.secretKey, body: { ticket } });

describe('Account Portal in Chromium', () => {
  it('signs in with a password and the TOTP step, then hands the app a ticket', async () => {
    const user = await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
      email: 'ada@example.com',
      password: strongPassword,
      email_verified: true,
    });
    const { secret } = await enrollTotp(h.db, h.config, user, 'Northwind');
    const step = Math.floor(Date.now() / 30_000);
    await activateTotp(h.db, h.config, user, await generate({ secret, epoch: (step - 1) * 30 }));

    const page = await newPage();
    await page.goto(
      `${web.url}/sign-in?publishable_key=${env.publishableKey}&redirect_url=${encodeURIComponent(appUrl)}`,
    );
    await expect(page.title()).resolves.toBe('Sign in · Northwind');
    await page.screenshot({ path: `${shots}/sign-in.png` });
    await page.getByLabel('Email').fill('ada@example.com');
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('The identifier or password is wrong');
    await expect(page.getByLabel('Email').inputValue()).resolves.toBe('ada@example.com');
    await page.getByLabel('Password').fill(strongPassword);
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    await page.screenshot({ path: `${shots}/totp.png` });
    await page.getByLabel('Verification code').fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('not valid');
    await page.getByLabel('Verification code').fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) }));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL((u) => u.toString().startsWith(appUrl));
    const r = await redeem(ticketOf(page)!);
    expect(r).toMatchObject({ status: 200, body: { user: { id: user.id }, session: { method: 'password' } } });
    await page.context().close();
  });

  it("signs in through a local Google with the portal's social button", async () => {
    const page = await newPage();
    await page.goto(
      `${web.url}/sign-in?publishable_key=${env.publishableKey}&redirect_url=${encodeURIComponent(appUrl)}`,
    );
    await page.getByRole('link', { name: 'Continue with Google' }).click();
    await page.getByRole('heading', { name: 'Sign in with google' }).waitFor();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((u) => u.toString().startsWith(appUrl));
    await page.screenshot({ path: `${shots}/social-done.png` });
    const r = await redeem(ticketOf(page)!);
    expect(r).toMatchObject({
      status: 200,
      body: { user: { email: 'hedy@example.com' }, session: { method: 'oauth_google' } },
    });
    await page.context().close();
  });

  it('approves a device: code from the address, sign-in, consent showing the client and scopes', async () => {
    await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
      email: 'grace@example.com',
      password: strongPassword,
      email_verified: true,
    });
    const client = await createOAuthClient(h.db, env.env.id, {
      name: 'Northwind CLI',
      grants: ['device_code'],
      scopes: ['deploy', 'logs:read'],
    });
    const started = await fetch(`${web.url}/v1/oauth/device_authorization`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: client.id }),
    });
    const auth = (await started.json()) as { device_code: string; user_code: string; verification_uri: string };
    const page = await newPage();
    // The code typed by hand, in lower case and without its dash.
    await page.goto(auth.verification_uri);
    await page.getByLabel('Code').fill(auth.user_code.toLowerCase().replace('-', ''));
    await page.getByRole('button', { name: 'Continue' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Sign in to connect Northwind CLI');
    await page.getByLabel('Email').fill('grace@example.com');
    await page.getByLabel('Password').fill(strongPassword);
    await page.getByRole('button', { name: 'Continue', exact: true }).click();
    await page.getByRole('heading', { name: 'Allow access?' }).waitFor();
    await expect(page.locator('.client').textContent()).resolves.toMatch(
      /Northwind CLI.*grace@example\.com.*deploy.*logs:read/s,
    );
    await page.screenshot({ path: `${shots}/consent.png` });
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    await page.screenshot({ path: `${shots}/device-done.png` });
    const token = await fetch(`${web.url}/v1/oauth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: auth.device_code,
        client_id: client.id,
      }),
    });
    const body = (await token.json()) as { access_token: string };
    expect(token.status).toBe(200);
    expect(await call(web.url, 'GET', '/v1/client/session', { key: body.access_token })).toMatchObject({
      status: 200,
      body: { user: { email: 'grace@example.com' } },
    });
    await page.context().close();
  });
});
