// What the console's browser tests share: Debian's chromium through playwright-core, an axe-core
// audit of the page as it is, and signing in with a secret key.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.ts';

export const shots = 'test-results/console';
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(shots, { recursive: true });
  return launchChromium();
}

export async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
  return context.newPage();
}

/** axe-core's default rules on the page as it is; evaluated over CDP, so the page's CSP still holds for its own content. */
export async function audit(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run: () => Promise<{ violations: { id: string; impact: string }[] }> } }
    ).axe;
    return (await axe.run()).violations.map((v) => `${v.impact}: ${v.id}`);
  });
  return result.filter((v) => v.startsWith('serious') || v.startsWith('critical'));
}

export const sessionCookie = async (page: Page) =>
  (await page.context().cookies()).find((c) => c.name === 'cairn_console_session');

export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/console`);
  await page.getByLabel('Secret key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** A console form as a client without a browser reads it: the browser cookie its GET set and its hidden fields. */
export interface FetchedForm {
  status: number;
  html: string;
  /** `name=value` of the cookies the page set (the CSRF browser id, at least). */
  cookie: string;
  fields: Record<string, string>;
}

export async function fetchForm(url: string, cookie = ''): Promise<FetchedForm> {
  const res = await fetch(url, { redirect: 'manual', headers: cookie ? { cookie } : {} });
  const html = await res.text();
  const set = res.headers.getSetCookie().map((c) => c.split(';')[0]!);
  const fields: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = m[2]!;
  return { status: res.status, html, cookie: [cookie, ...set].filter(Boolean).join('; '), fields };
}

/** POSTs a console form (form-encoded) as a browser would, without following the redirect. */
export function postForm(
  url: string,
  fields: Record<string, string>,
  cookie: string,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}), ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}
