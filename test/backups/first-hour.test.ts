// README's "Your first hour", step "Back up and restore", as a newcomer types it: `cairn admin
// demo-database` makes a sample database on the service's own server and sets it, then the backup,
// the list and the restore (its plan counting the sample's rows) run through the CLI against a
// real web, worker, Postgres and object store; the restore brings back rows deleted since.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { demoDatabaseName } from '../../src/domain/backups/setup/demo.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { queues } from '../../src/queues.ts';
import { handlers } from '../../workers/handlers.ts';
import { testEncryptionKey } from '../support/config.ts';
import { runCairn } from '../support/cli.ts';
import { createTestEnv, useWeb } from '../support/harness.ts';
import { databaseUrl, withAdmin } from '../support/pg.ts';
import { query } from './support.ts';

const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;
let worker: WorkerHandle<typeof queues>;
let env: CreatedEnv;

const stack = useWeb({}, { CAIRN_BACKUP_BUCKET: bucket });
beforeAll(async () => {
  worker = await startWorker(stack.h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  env = await createTestEnv(stack.h.db);
});
afterAll(async () => {
  await worker?.stop();
  await createObjectStore(stack.h.config)
    .deleteBucket(bucket)
    .catch(() => undefined);
  if (env) await withAdmin((c) => c.query(`drop database if exists ${demoDatabaseName(env.env.id)} with (force)`));
});

it('backs up and restores the sample database, as README shows', async () => {
  const admin = { DATABASE_URL: stack.h.config.DATABASE_URL, CAIRN_ENCRYPTION_KEY: testEncryptionKey };
  const api = { CAIRN_API_URL: stack.web.url, CAIRN_SECRET_KEY: env.secretKey, CAIRN_ENV: env.env.name };
  const name = demoDatabaseName(env.env.id);

  const demo = await runCairn(['admin', 'demo-database', '--env', env.env.name], admin);
  expect(demo.code, demo.stderr).toBe(0);
  expect(demo.stdout).toContain(
    `created sample database ${name}: customers 20 rows, products 8 rows, orders 50 rows, order_lines 100 rows`,
  );
  expect(demo.stdout).toContain(`database set for ${env.env.name}: database "${name}"`);
  expect(demo.stdout).toContain(`next: npx cairn backups create --env ${env.env.name}`);
  // The service's own password is not printed.
  const password = new URL(stack.h.config.DATABASE_URL).password;
  if (password) expect(demo.stdout + demo.stderr).not.toContain(password);

  const created = await runCairn(['backups', 'create', '--json'], api);
  expect(created.code, created.stderr).toBe(0);
  const backup = JSON.parse(created.stdout) as { id: string; state: string };
  expect(backup.state).toBe('succeeded');
  expect((await runCairn(['backups', 'list'], api)).stdout).toContain(backup.id);

  // Run again, it keeps the database as it is: a newcomer's changes are theirs.
  const demoUrl = databaseUrl(name, stack.h.config.DATABASE_URL);
  await query(demoUrl, 'delete from order_lines where order_id > 10');
  const again = await runCairn(['admin', 'demo-database', '--env', env.env.name], admin);
  expect(again.stdout).toContain(`kept the existing sample database ${name}: customers 20 rows`);
  expect(again.stdout).toContain('order_lines 20 rows');

  const restored = await runCairn(['backups', 'restore', backup.id, '--confirm'], api);
  expect(restored.code, restored.stderr).toBe(0);
  // The plan counts the sample's small tables: exact rows, never "~0 rows".
  expect(restored.stderr).toContain('4 tables, 98 rows in all');
  expect(restored.stderr).toMatch(/public\.orders {2}50 rows/);
  expect(restored.stdout).toContain(`restored ${backup.id} into ${env.env.name}`);
  expect(await query(demoUrl, 'select count(*)::int as n from order_lines')).toEqual([{ n: 100 }]);
  // Six CLI runs, each a child process: a minute and more on a busy 2-core machine.
}, 180_000);
