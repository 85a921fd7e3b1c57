// One-use console sign-in links from outside: `cairn console --env` (the key's API) and `cairn admin
// console-link --env` (DATABASE_URL) print only a link; in Chromium its page's button opens the
// console with the key's scopes (the operator's: every scope); used again, expired, or its key
// revoked, it shows the sign-in page saying so and the command that prints another. Two uses at
// once open one session. The table holds only the token's hash.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/crypto.ts';
import { createKey, type CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { tenancyQueries } from '../../src/domain/tenancy/queries.ts';
import type { WebHandle } from '../../src/server.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { runCairn } from '../support/cli.ts';
import { audit, fetchForm, launchBrowser, newPage, postForm, sessionCookie, shots } from './support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let browser: Browser;

// At its CAIRN_BASE_URL: the console's forms are refused from any other origin (csrf.ts).
const stack = useWeb({ atBaseUrl: true });
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
});

const viaApi = async (key: string) => {
  const res = await runCairn(['console', '--env', env.env.name], { CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: key });
  expect(res.code, res.stderr).toBe(0);
  return res.stdout;
};
const linkPattern = /^http:\/\/127\.0\.0\.1:\d+\/console\/sign-in\/link\?token=cairn_clink_[0-9A-Za-z]{32}\n$/;
const tokenOf = (link: string) => new URL(link.trim()).searchParams.get('token')!;

describe('console sign-in links', () => {
  it("from `cairn console`, open the console once with the key's scopes, then show why they no longer do", async () => {
    const key = await createKey(h.db, env.env, 'secret', ['backups:read']);
    const link = await viaApi(key.token);
    expect(link).toMatch(linkPattern);
    const rows = await h.db('console_links').where({ env_id: env.env.id });
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toEqual(sha256(tokenOf(link)));
    expect(JSON.stringify(rows)).not.toContain(tokenOf(link));

    const page = await newPage(browser);
    await page.goto(link.trim());
    // Opening it only shows what it opens: no session until its button is pressed.
    expect(await sessionCookie(page)).toBeUndefined();
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/link-sign-in.png`, fullPage: true });
    await page.getByRole('button', { name: `Sign in to the console of ${env.env.name}` }).click();
    await page.waitForURL(/\/console\/errors$/);
    await expect(page.getByRole('alert').textContent()).resolves.toContain('lacks the scope observability:read');
    await page.getByRole('link', { name: 'Backups', exact: true }).click();
    await expect(page.getByRole('heading', { name: 'Backups' }).isVisible()).resolves.toBe(true);

    // Used: another browser gets the sign-in page, saying so.
    const again = await newPage(browser);
    const answer = await again.goto(link.trim());
    expect(answer!.status()).toBe(410);
    expect(new URL(again.url()).pathname).toBe('/console/sign-in/link');
    await expect(again.getByRole('alert').textContent()).resolves.toContain('already used or has expired');
    await expect(again.getByRole('alert').textContent()).resolves.toContain(
      `npx cairn admin console-link --env ${env.env.name}`,
    );
    await expect(again.getByLabel('Secret key').isVisible()).resolves.toBe(true);
    expect(await sessionCookie(again)).toBeUndefined();
    expect(await audit(again)).toEqual([]);
    await again.screenshot({ path: `${shots}/link-used.png`, fullPage: true });
    await page.context().close();
    await again.context().close();
  }, 180_000);

  it('from `cairn admin console-link`, opens the console with every scope; expired or revoked, it does not', async () => {
    const res = await runCairn(['admin', 'console-link', '--env', env.env.name], {
      DATABASE_URL: h.config.DATABASE_URL,
      CAIRN_BASE_URL: web.url,
    });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(linkPattern);
    const page = await newPage(browser);
    await page.goto(res.stdout.trim());
    await page.getByRole('button', { name: `Sign in to the console of ${env.env.name}` }).click();
    await expect(page.getByRole('heading', { name: 'Errors' }).isVisible()).resolves.toBe(true);
    await page.goto(`${web.url}/console/users`);
    await expect(page.getByRole('heading', { name: 'Users' }).isVisible()).resolves.toBe(true);

    const expired = await viaApi(env.secretKey);
    await h
      .db('console_links')
      .where({ token_hash: sha256(tokenOf(expired)) })
      .update({ expire_time: h.db.raw("now() - interval '1 second'") });
    const key = await createKey(h.db, env.env, 'secret');
    const revoked = await viaApi(key.token);
    await tenancyQueries(h.db).revokeKey(key.key.id);
    for (const link of [
      expired,
      revoked,
      `${web.url}/console/sign-in/link?token=cairn_clink_${'A'.repeat(32)}`,
      `${web.url}/console/sign-in/link`,
    ]) {
      const res = await fetch(link.trim(), { redirect: 'manual' });
      expect(res.status).toBe(410);
      expect(res.headers.get('set-cookie') ?? '').not.toContain('cairn_console_session=');
      expect(await res.text()).toContain('already used or has expired');
    }
    await page.context().close();
  }, 180_000);

  it('opens one session when used twice at once', async () => {
    const sessions = async () =>
      Number((await h.db('console_sessions').where({ env_id: env.env.id }).count({ n: '*' }))[0]!.n);
    const before = await sessions();
    const link = (await viaApi(env.secretKey)).trim();
    const form = await fetchForm(link);
    expect(form.status).toBe(200);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => postForm(`${web.url}/console/sign-in/link`, form.fields, form.cookie)),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([303, 410, 410, 410, 410, 410, 410, 410]);
    expect(await sessions()).toBe(before + 1);
  }, 180_000);
});
