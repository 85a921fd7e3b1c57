// The console's Backups page in a real headless Chromium, against a real worker, pg_dump and the S3
// server: "Back up now", a restore refused for a wrong confirmation (nothing changes), a restore
// into another environment of the project confirmed by its full name, followed live on the
// operation's page until done (the target then holds the source's rows), and a key without
// backups:write seeing the page read-only and refused however it posts. Every page passes axe.
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKey, type CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { queues } from '../../src/queues.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import {
  createAppDatabase,
  query,
  seedSource,
  setEnvDatabase,
  tableChecksums,
  waitFor,
  type AppDatabase,
} from '../backups/support.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { audit, launchBrowser, newPage, shots, signIn } from './support.ts';

const bucket = `cairn-console-${randomBytes(5).toString('hex')}`;
const project = `orgs/console-org/projects/shop-${randomBytes(3).toString('hex')}`;
let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<typeof queues>;
let source: AppDatabase;
let target: AppDatabase;
let prod: CreatedEnv;
let staging: CreatedEnv;
let browser: Browser;

// At its CAIRN_BASE_URL: the console's forms are refused from any other origin (csrf.ts).
const stack = useWeb({ atBaseUrl: true }, { CAIRN_BACKUP_BUCKET: bucket });
beforeAll(async () => {
  ({ h, web } = stack);
  worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  [source, target] = await Promise.all([
    createAppDatabase(seedSource),
    createAppDatabase('create table leftovers (id int primary key); insert into leftovers values (1);'),
  ]);
  prod = await createTestEnv(h.db, `${project}/envs/prod`);
  staging = await createTestEnv(h.db, `${project}/envs/staging`);
  await setEnvDatabase(h.db, h.config, prod.env.id, source.url);
  await setEnvDatabase(h.db, h.config, staging.env.id, target.url);
  browser = await launchBrowser();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await worker?.stop();
  await createObjectStore(h.config)
    .deleteBucket(bucket)
    .catch(() => undefined);
  await source?.drop();
  await target?.drop();
});

const leftovers = async () =>
  (await query<{ n: string }>(target.url, "select count(*) as n from pg_tables where tablename = 'leftovers'"))[0]!.n;

describe('the Backups page in Chromium', () => {
  it('backs up now, refuses a wrong confirmation, and restores with the right one, showing progress until done', async () => {
    const page = await newPage(browser);
    await signIn(page, web.url, prod.secretKey);
    await page.getByRole('link', { name: 'Backups', exact: true }).click();
    await expect(page.getByRole('heading', { name: 'Backups' }).isVisible()).resolves.toBe(true);
    await expect(page.locator('.empty').textContent()).resolves.toBe('No backups yet.');
    expect(await audit(page)).toEqual([]);

    await page.getByRole('button', { name: 'Back up now' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toMatch(/^Backup backup_\w+ started/);
    await waitFor(
      'the backup',
      async () => {
        await page.reload();
        return (await page.locator('tbody .state').first().textContent()) === 'succeeded';
      },
      60_000,
    );
    await expect(page.locator('tbody tr').first().textContent()).resolves.toMatch(/manual[\s\S]*succeeded[\s\S]*KiB/);
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/backups.png`, fullPage: true });

    // A confirmation that is not the target's full name: 400, said in an alert, nothing restored.
    const restoreWith = async (confirmation: string) => {
      await page.getByText('Restore…').first().click();
      await page.getByLabel('Target environment').first().selectOption(staging.env.name);
      await page.getByLabel("Type the target environment's full name to confirm").first().fill(confirmation);
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/restore')),
        page.getByRole('button', { name: 'Restore', exact: true }).first().click(),
      ]);
      return answer.status();
    };
    expect(await restoreWith('staging')).toBe(400);
    await expect(page.getByRole('alert').textContent()).resolves.toContain(
      `The confirmation does not match the target environment ${staging.env.name}`,
    );
    expect(await h.db('backup_operations').where({ env_id: staging.env.id }).count({ n: '*' })).toEqual([{ n: '0' }]);
    expect(await leftovers()).toBe('1');
    expect(await audit(page)).toEqual([]);

    // The full name: the operation's page, which follows the restore by itself until it is done.
    expect(await restoreWith(staging.env.name)).toBe(303);
    await page.waitForURL(/\/console\/operations\/op_\w+$/);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toMatch(
      new RegExp(`^Restore of backup_\\w+ into ${staging.env.name}$`),
    );
    expect(await audit(page)).toEqual([]);
    await page.locator('#progress[data-done="true"]').waitFor({ timeout: 60_000 });
    await expect(page.getByRole('status').textContent()).resolves.toMatch(
      /^Restored backup_\w+ into .*staging\. The target as it was is kept as backup backup_\w+\.$/,
    );
    expect(await audit(page)).toEqual([]);
    await page.screenshot({ path: `${shots}/restore-done.png`, fullPage: true });
    expect(await tableChecksums(target.url)).toEqual(await tableChecksums(source.url));
    expect(await leftovers()).toBe('0');
    await page.context().close();
  });

  it('shows a key without backups:write the page read-only, and refuses its posts, and any post without CSRF', async () => {
    const key = await createKey(h.db, prod.env, 'secret', ['backups:read']);
    const page: Page = await newPage(browser);
    await signIn(page, web.url, key.token);
    await page.goto(`${web.url}/console/backups`);
    expect(await page.getByRole('button', { name: 'Back up now' }).isDisabled()).toBe(true);
    await page.getByText('Restore…').first().click();
    expect(await page.getByRole('button', { name: 'Restore', exact: true }).first().isDisabled()).toBe(true);
    expect(await audit(page)).toEqual([]);
    const before = await h.db('backups').count({ n: '*' });
    const csrf = await page.locator('input[name=csrf]').first().inputValue();
    const backupId = (await h.db('backups').where({ env_id: prod.env.id }).first('id')).id as string;
    const posts = [
      page.request.post(`${web.url}/console/backups`, { form: { csrf }, maxRedirects: 0 }),
      page.request.post(`${web.url}/console/backups/${backupId}/restore`, {
        form: { csrf, target: staging.env.name, confirm: staging.env.name },
        maxRedirects: 0,
      }),
      page.request.post(`${web.url}/console/backups`, { form: {}, maxRedirects: 0 }),
    ];
    expect(await Promise.all(posts.map(async (p) => (await p).status()))).toEqual([403, 403, 403]);
    expect(await h.db('backups').count({ n: '*' })).toEqual(before);
    expect(await h.db('backup_operations').where({ env_id: staging.env.id }).count({ n: '*' })).toEqual([{ n: '1' }]);
    await page.context().close();
  });
});
