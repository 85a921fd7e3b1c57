// `cairn backups url`: an expiring link to a backup's decrypted .sql.gz that needs no key. It gives
// the same bytes as the authenticated download (a real backup by the real worker into the S3
// server); a tampered, moved, expired or over-long link is refused before the database is asked.
// And `download --sealed` with `decrypt`: the encrypted object, opened offline with the service key.
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { signDownload } from '../../src/domain/backups/downloads/download-links.ts';
import { createKey } from '../../src/domain/tenancy/envs.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { newId } from '../../src/ids.ts';
import { queues } from '../../src/queues.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { runCairn } from '../support/cli.ts';
import { testEncryptionKey } from '../support/config.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { createAppDatabase, seedSource, setEnvDatabase, waitFor, type AppDatabase } from './support.ts';

let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<typeof queues>;
let env: CreatedEnv;
let app: AppDatabase;
/** A real backup of `app`, by the real worker. */
let id: string;
const bucket = `cairn-url-${randomBytes(5).toString('hex')}`;

const stack = useWeb({}, { CAIRN_BACKUP_BUCKET: bucket });
beforeAll(async () => {
  ({ h, web } = stack);
  worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  env = await createTestEnv(h.db);
  app = await createAppDatabase(seedSource);
  await setEnvDatabase(h.db, h.config, env.env.id, app.url);
  const created = await call<{ id: string }>(web.url, 'POST', `/v1/${env.env.name}/backups`, {
    key: env.secretKey,
    body: { type: 'manual' },
  });
  id = created.body.id;
  await waitFor('the backup', async () => {
    const b = await call<{ state: string }>(web.url, 'GET', `/v1/backups/${id}`, { key: env.secretKey });
    return b.body.state === 'succeeded' ? true : undefined;
  });
});
afterAll(async () => {
  await worker?.stop();
  await createObjectStore(h.config)
    .deleteBucket(bucket)
    .catch(() => undefined);
  await app?.drop();
});

const bytes = async (res: Response) => Buffer.from(await res.arrayBuffer());

it('gives the same bytes as the authenticated download, without a key, until it expires', async () => {
  const link = await call<{ url: string; expire_time: string }>(web.url, 'POST', `/v1/backups/${id}:url`, {
    key: env.secretKey,
    body: { expires_in_seconds: 600 },
  });
  expect(link.status).toBe(200);
  expect(link.body.url).toMatch(
    new RegExp(`/v1/backups/${id}:signedDownload\\?expires=\\d+&key=key_[0-9a-z]+&signature=[\\w-]+$`),
  );
  const left = new Date(link.body.expire_time).getTime() - Date.now();
  expect(left).toBeGreaterThan(590_000);
  expect(left).toBeLessThanOrEqual(600_000);

  const url = new URL(link.body.url);
  const local = `${web.url}${url.pathname}${url.search}`;
  const viaLink = await fetch(local);
  expect(viaLink.status).toBe(200);
  expect(viaLink.headers.get('content-type')).toBe('application/gzip');
  const viaKey = await fetch(`${web.url}/v1/backups/${id}:download`, {
    headers: { authorization: `Bearer ${env.secretKey}` },
  });
  expect(await bytes(viaLink)).toEqual(await bytes(viaKey));

  const refused = async (target: string) => {
    const res = await fetch(target);
    expect(res.status, target).toBe(403);
    expect(((await res.json()) as { code: string }).code).toBe('forbidden');
  };
  const expires = Number(url.searchParams.get('expires'));
  const key = url.searchParams.get('key')!;
  const signature = url.searchParams.get('signature')!;
  const at = (path: string, q: { expires: number; key: string; signature: string }) =>
    `${web.url}${path}?expires=${q.expires}&key=${q.key}&signature=${q.signature}`;
  // Tampered; moved to another backup; stretched; made for another key; expired; too long.
  await refused(at(url.pathname, { expires, key, signature: `${signature.slice(0, -2)}AA` }));
  await refused(at(`/v1/backups/${newId('backup')}:signedDownload`, { expires, key, signature }));
  await refused(at(url.pathname, { expires: expires + 1, key, signature }));
  await refused(at(url.pathname, { expires, key: 'key_other', signature }));
  await refused(at(url.pathname, signDownload(h.config, id, Math.floor(Date.now() / 1000) - 1, key)));
  await refused(at(url.pathname, signDownload(h.config, id, Math.floor(Date.now() / 1000) + 3 * 86_400, key)));

  const cli = await runCairn(['backups', 'url', id, '--expires-in', '120'], {
    CAIRN_API_URL: web.url,
    CAIRN_SECRET_KEY: env.secretKey,
  });
  expect(cli.code, cli.stderr).toBe(0);
  expect(cli.stdout).toMatch(/:signedDownload\?expires=\d+&key=\w+&signature=/);
  expect(cli.stdout).toContain('anyone with it can download');
});

it('is made only for a succeeded backup of the key’s environment', async () => {
  const running = newId('backup');
  await h.db('backups').insert({
    id: running,
    env_id: env.env.id,
    type: 'manual',
    trigger: 'manual',
    state: 'running',
    bucket,
    object_key: `backups/db/x/${running}.sql.gz`,
    expire_time: new Date(Date.now() + 86_400_000),
  });
  const refused = await call(web.url, 'POST', `/v1/backups/${running}:url`, { key: env.secretKey });
  expect(refused.status).toBe(409);
  const other = await createTestEnv(h.db);
  expect((await call(web.url, 'POST', `/v1/backups/${running}:url`, { key: other.secretKey })).status).toBe(404);
  const tooLong = await call(web.url, 'POST', `/v1/backups/${running}:url`, {
    key: env.secretKey,
    body: { expires_in_seconds: 2 * 86_400 },
  });
  expect(tooLong.status).toBe(400);
});

it('a sealed download decrypts offline with the service key alone, and refuses a wrong key or a damaged file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-sealed-'));
  try {
    const api = { CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: env.secretKey };
    const file = join(dir, 'prod.cairnbk');
    const got = await runCairn(['backups', 'download', id, '--sealed', '-o', file], api);
    expect(got.code, got.stderr).toBe(0);
    expect((await readFile(file)).subarray(0, 8).toString()).toBe('CAIRNBK1');
    expect(JSON.parse(await readFile(`${file}.key.json`, 'utf8'))).toMatchObject({ backup_id: id, key_id: 'k1' });

    // Offline: no API, no database; only the service key.
    const done = await runCairn(['backups', 'decrypt', file], { CAIRN_ENCRYPTION_KEY: testEncryptionKey });
    expect(done.code, done.stderr).toBe(0);
    const viaKey = await fetch(`${web.url}/v1/backups/${id}:download`, {
      headers: { authorization: `Bearer ${env.secretKey}` },
    });
    expect(await readFile(join(dir, 'prod.sql.gz'))).toEqual(await bytes(viaKey));

    const wrong = await runCairn(['backups', 'decrypt', file, '-o', join(dir, 'x.sql.gz')], {
      CAIRN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('does not open with this CAIRN_ENCRYPTION_KEY');

    const damaged = await readFile(file);
    await writeFile(file, damaged.subarray(0, damaged.length - 7));
    const cut = await runCairn(['backups', 'decrypt', file, '-o', join(dir, 'cut.sql.gz')], {
      CAIRN_ENCRYPTION_KEY: testEncryptionKey,
    });
    expect(cut.code).toBe(1);
    expect(cut.stderr).toContain('is damaged or incomplete');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

it('stops working when the key that asked for it is revoked', async () => {
  const made = await createKey(h.db, env.env, 'secret', ['backups:read']);
  const link = await call<{ url: string }>(web.url, 'POST', `/v1/backups/${id}:url`, { key: made.token });
  const url = new URL(link.body.url);
  const local = `${web.url}${url.pathname}${url.search}`;
  expect((await fetch(local)).status).toBe(200);
  await h.db('api_keys').where({ id: made.key.id }).update({ revoke_time: new Date() });
  expect((await fetch(local)).status).toBe(403);
});
