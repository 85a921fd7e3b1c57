// Console sign-in links are not a login CSRF, checked from outside in a real headless Chromium and
// over HTTP. Anyone with a key of an environment can make a link to its console; a browser signed in
// to another environment that opens it must not be swapped over silently, and a link fetched by a
// mail scanner or `curl` must still work for the person. So:
// - opening a link (GET, or HEAD) changes nothing: a page names the environment it opens and, when
//   the browser is signed in, the one it is in: "Continue as …" (a POST) or "Stay";
// - "Stay" keeps the session and leaves the link usable; "Continue" uses it, swaps the session and
//   ends the replaced one on the server;
// - a browser without a session gets one "Sign in to the console of <env>" button;
// - the POST needs the page's CSRF proof (the signed browser cookie the GET set and its token) and
//   must not come from another site (Origin, Sec-Fetch-Site): else 403 and the link is not used;
// - the page sends no Referer (the token is in its URL) and passes an axe audit.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import {
  audit,
  fetchForm,
  launchBrowser,
  newPage,
  postForm,
  sessionCookie,
  shots,
  signIn,
} from '../console/support.ts';
import { runCairn } from '../support/cli.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';

/** Chromium, CLI processes and hundreds of requests on a shared, busy machine: no timing is asserted. */
const slow = 240_000;

let h: Harness;
let web: WebHandle;
let a: CreatedEnv;
let b: CreatedEnv;
let browser: Browser;

const stack = useWeb({ atBaseUrl: true });
beforeAll(async () => {
  ({ h, web } = stack);
  a = await createTestEnv(h.db, `orgs/sec-console/projects/p${process.pid}/envs/alpha`);
  b = await createTestEnv(h.db, `orgs/sec-console/projects/p${process.pid}/envs/bravo`);
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

/** An operator's link to the environment's console, as `cairn admin console-link` prints it. */
async function adminLink(env: CreatedEnv): Promise<string> {
  const res = await runCairn(['admin', 'console-link', '--env', env.env.name], {
    DATABASE_URL: h.config.DATABASE_URL,
    CAIRN_BASE_URL: web.url,
  });
  expect(res.code, res.stderr).toBe(0);
  return res.stdout.trim();
}

const linkAction = () => `${web.url}/console/sign-in/link`;
const envShown = (page: Page) => page.locator('header .env').textContent();

async function signedInTo(env: CreatedEnv): Promise<Page> {
  const page = await newPage(browser);
  await signIn(page, web.url, env.secretKey);
  await page.waitForURL(/\/console\/errors$/);
  expect(await envShown(page)).toBe(env.env.name);
  return page;
}

/** What a console session cookie opens now: 200 (live) or 303 to sign-in (ended). */
async function sessionAnswer(token: string): Promise<number> {
  const res = await fetch(`${web.url}/console/errors`, {
    redirect: 'manual',
    headers: { cookie: `cairn_console_session=${token}` },
  });
  if (res.status === 303) expect(res.headers.get('location')).toBe('/console/sign-in');
  return res.status;
}

describe('a console link opened in a browser signed in to another environment', () => {
  it(
    'asks first, naming both; "Stay" keeps the session and the link; a scanner\'s GET uses nothing; "Continue" swaps',
    async () => {
      const page = await signedInTo(a);
      const before = (await sessionCookie(page))!.value;
      const link = await adminLink(b);

      const answer = await page.goto(link);
      expect(answer!.status()).toBe(200);
      expect(answer!.headers()['referrer-policy']).toBe('no-referrer');
      expect(answer!.headers()['cache-control']).toBe('no-store');
      expect(await page.locator('meta[name="referrer"]').getAttribute('content')).toBe('no-referrer');
      const text = (await page.locator('main').textContent())!;
      expect(text).toContain(`signed in to the console of ${a.env.name}`);
      expect(text).toContain(`is for ${b.env.name}`);
      await expect(page.getByRole('button', { name: `Continue as ${b.env.name}` }).isVisible()).resolves.toBe(true);
      await expect(page.getByRole('link', { name: 'Stay' }).isVisible()).resolves.toBe(true);
      // Nothing changed yet: the same cookie, still a live session of A.
      expect((await sessionCookie(page))!.value).toBe(before);
      expect(await sessionAnswer(before)).toBe(200);
      expect(await audit(page)).toEqual([]);
      await page.screenshot({ path: `${shots}/link-switch.png`, fullPage: true });

      await page.getByRole('link', { name: 'Stay' }).click();
      await page.waitForURL(/\/console\/errors$/);
      expect(await envShown(page)).toBe(a.env.name);
      expect((await sessionCookie(page))!.value).toBe(before);

      // A mail scanner or `curl` fetching the link (GET and HEAD) gets the page and uses nothing.
      for (const method of ['GET', 'HEAD']) {
        const scanned = await fetch(link, { method, redirect: 'manual' });
        expect(scanned.status).toBe(200);
        expect(scanned.headers.getSetCookie().join('\n')).not.toContain('cairn_console_session=');
        if (method === 'GET') expect(await scanned.text()).toContain(`Sign in to the console of ${b.env.name}`);
      }

      // The person's click still works: "Continue as B" swaps the session to B.
      await page.goto(link);
      await page.getByRole('button', { name: `Continue as ${b.env.name}` }).click();
      await page.waitForURL(/\/console\/errors$/);
      expect(await envShown(page)).toBe(b.env.name);
      const after = (await sessionCookie(page))!.value;
      expect(after).not.toBe(before);
      // The replaced session ended on the server, not only in this browser.
      expect(await sessionAnswer(before)).toBe(303);
      expect(await sessionAnswer(after)).toBe(200);

      // Used: the sign-in page says so, with the command that prints another.
      const again = await fetch(link, { redirect: 'manual' });
      expect(again.status).toBe(410);
      const gone = await again.text();
      expect(gone).toContain('already used or has expired');
      expect(gone).toContain(`npx cairn admin console-link --env ${b.env.name}`);
      await page.context().close();
    },
    slow,
  );

  it(
    "refuses another site's page posting the link for the browser (403): still signed in to A, the link unused",
    async () => {
      const page = await signedInTo(a);
      const before = (await sessionCookie(page))!.value;
      const link = await adminLink(b);
      const token = new URL(link).searchParams.get('token')!;
      // The attacker's own page, served by the browser itself (no network): it posts the link's form
      // at once, with a CSRF token of the attacker's own browser.
      const theirs = await fetchForm(link);
      await page.route('http://attacker.test/**', (route) =>
        route.fulfill({
          contentType: 'text/html',
          body: `<!doctype html><html lang="en"><head><meta name="referrer" content="no-referrer"><title>win</title></head><body>
<form method="post" action="${linkAction()}"><input type="hidden" name="token" value="${token}"><input type="hidden" name="csrf" value="${theirs.fields.csrf}"></form>
<script>document.forms[0].submit()</script></body></html>`,
        }),
      );
      const posted = page.waitForResponse((r) => r.url() === linkAction() && r.request().method() === 'POST');
      await page.goto('http://attacker.test/');
      expect((await posted).status()).toBe(403);

      await page.goto(`${web.url}/console/errors`);
      expect(await envShown(page)).toBe(a.env.name);
      expect((await sessionCookie(page))!.value).toBe(before);
      expect(await sessionAnswer(before)).toBe(200);
      // The link is still the person's: a fresh browser (no session) gets one "Sign in to B" button.
      const fresh = await newPage(browser);
      const answer = await fresh.goto(link);
      expect(answer!.status()).toBe(200);
      await expect(fresh.getByRole('heading', { name: 'Sign in to the console' }).isVisible()).resolves.toBe(true);
      await expect(fresh.getByRole('button').count()).resolves.toBe(1);
      await expect(fresh.getByRole('link', { name: 'Stay' }).count()).resolves.toBe(0);
      expect(await audit(fresh)).toEqual([]);
      await fresh.getByRole('button', { name: `Sign in to the console of ${b.env.name}` }).click();
      await fresh.waitForURL(/\/console\/errors$/);
      expect(await envShown(fresh)).toBe(b.env.name);
      await page.context().close();
      await fresh.context().close();
    },
    slow,
  );
});

describe("a link's POST without the page's CSRF proof", () => {
  it(
    'is 403 and uses nothing; with the proof, from this origin, it signs in once',
    async () => {
      const link = await adminLink(b);
      const page = await fetchForm(link);
      expect(page.status).toBe(200);
      expect(page.fields.token).toBe(new URL(link).searchParams.get('token'));
      expect(page.fields.csrf).toBeTruthy();
      expect(page.cookie).toContain('cairn_portal_browser=');
      expect(page.cookie).not.toContain('cairn_console_session=');
      const other = await fetchForm(link);

      const { token, csrf } = page.fields as { token: string; csrf: string };
      const refused: [string, Record<string, string>, string, Record<string, string>][] = [
        ['no cookie, no token', { token }, '', {}],
        ["the page's token without its cookie", { token, csrf }, '', {}],
        ['the cookie without the token', { token }, page.cookie, {}],
        ["another browser's token", { token, csrf: other.fields.csrf! }, page.cookie, {}],
        ['a forged token', { token, csrf: 'A'.repeat(43) }, page.cookie, {}],
        ['from another origin', { token, csrf }, page.cookie, { origin: 'http://attacker.test' }],
        // A page of another site sending no Referer posts `Origin: null`, as ours do; its browser
        // still says where the request came from (Fetch Metadata), even with a planted cookie.
        [
          'from another site, Origin null',
          { token, csrf },
          page.cookie,
          { origin: 'null', 'sec-fetch-site': 'cross-site' },
        ],
        ['from a sibling subdomain', { token, csrf }, page.cookie, { origin: 'null', 'sec-fetch-site': 'same-site' }],
      ];
      for (const [what, fields, cookie, headers] of refused) {
        const res = await postForm(linkAction(), fields, cookie, headers);
        expect(res.status, what).toBe(403);
        expect(res.headers.getSetCookie().join('\n'), what).not.toContain('cairn_console_session=');
      }

      // Nothing was used: the page still offers the link, and the right POST signs in once.
      expect((await fetchForm(link)).html).toContain(`Sign in to the console of ${b.env.name}`);
      const ok = await postForm(linkAction(), { token, csrf }, page.cookie, { 'sec-fetch-site': 'same-origin' });
      expect(ok.status).toBe(303);
      expect(ok.headers.get('location')).toBe('/console/errors');
      const session = /cairn_console_session=([^;]+)/.exec(ok.headers.getSetCookie().join('\n'))?.[1];
      expect(session).toBeTruthy();
      expect(await sessionAnswer(session!)).toBe(200);
      const twice = await postForm(linkAction(), { token, csrf }, page.cookie);
      expect(twice.status).toBe(410);
      expect(await twice.text()).toContain(`npx cairn admin console-link --env ${b.env.name}`);
    },
    slow,
  );
});
