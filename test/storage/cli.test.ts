// `cairn storage …` as an operator runs it: the real binary in a child process, over the HTTP API
// of a real web process, against the real S3 server (radosgw, with S3's own versioning).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { runCairn, type CliRun } from '../support/cli.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let dir: string;

const cairn = (...args: string[]): Promise<CliRun> =>
  runCairn(args, { CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: env.secretKey, CAIRN_ENV: env.env.name });

async function json<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const r = await cairn(...args, '--json');
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
}

const stack = useWeb({}, { CAIRN_STORAGE_BUCKET_PREFIX: `ccli-${randomBytes(3).toString('hex')}-` });
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  dir = mkdtempSync(join(tmpdir(), 'cairn-storage-cli-'));
});

afterAll(async () => {
  // The S3 buckets behind this test's storage buckets go too (the test server keeps objects in RAM).
  const store = createObjectStore(h.config);
  for (const b of await h.db('storage_buckets').select('s3_bucket'))
    await store.deleteBucket(b.s3_bucket).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe('cairn storage', () => {
  const name = `assets-${randomBytes(3).toString('hex')}`;
  const key = 'reports/2026/summary.txt';
  type Versions = { versions: { versionId: string; isLatest: boolean; isDeleteMarker: boolean; size: number }[] };

  it('creates and lists buckets, puts and gets objects, and keeps and restores versions', async () => {
    const bucket = await json('storage', 'buckets', 'create', name);
    expect(bucket).toMatchObject({ name: `${env.env.name}/buckets/${name}`, bucket: name, versioning: 'disabled' });
    const list = await json<{ buckets: { name: string }[] }>('storage', 'buckets', 'list');
    expect(list.buckets.map((b) => b.name)).toContain(`${env.env.name}/buckets/${name}`);
    expect((await cairn('storage', 'buckets', 'list')).stdout).toContain(`${name}  versioning disabled`);

    // The first version is written before versioning is on: S3 gives it the version id "null".
    const v1File = join(dir, 'v1.txt');
    writeFileSync(v1File, 'first version\n');
    const put1 = await json<{ key: string; size: number; versionId?: string }>(
      'storage',
      'put',
      name,
      key,
      v1File,
      '--content-type',
      'text/plain',
    );
    expect(put1).toMatchObject({ key, size: 14 });
    expect((await cairn('storage', 'get', name, key)).stdout).toBe('first version\n');
    const out = join(dir, 'got.txt');
    const toFile = await cairn('storage', 'get', name, key, '-o', out);
    expect(toFile).toMatchObject({ code: 0, stdout: '' });
    expect(readFileSync(out, 'utf8')).toBe('first version\n');

    // --env names the environment as well as CAIRN_ENV does.
    expect(await json('storage', 'enable-versioning', name, '--env', env.env.name)).toMatchObject({
      bucket: name,
      versioning: 'enabled',
    });
    expect(await json('storage', 'buckets', 'list')).toMatchObject({
      buckets: [{ bucket: name, versioning: 'enabled' }],
    });
    const v2File = join(dir, 'v2.txt');
    writeFileSync(v2File, 'second version, longer\n');
    const put2 = await json<{ versionId: string; size: number }>('storage', 'put', name, key, v2File);
    expect(put2).toMatchObject({ key, size: 23, versionId: expect.any(String) });
    expect(put2.versionId).not.toBe('null');
    expect((await cairn('storage', 'get', name, key)).stdout).toBe('second version, longer\n');

    // Newest first; only the newest is latest.
    const versions = await json<Versions>('storage', 'versions', name, key);
    expect(versions.versions.map((v) => [v.versionId, v.isLatest, v.size])).toEqual([
      [put2.versionId, true, 23],
      ['null', false, 14],
    ]);
    expect((await cairn('storage', 'versions', name, key)).stdout).toMatch(new RegExp(`^${put2.versionId} .*latest`));

    // The old version by id, to stdout and to a file.
    expect((await cairn('storage', 'get', name, key, '--version-id', 'null')).stdout).toBe('first version\n');
    const old = join(dir, 'old.txt');
    expect((await cairn('storage', 'get', name, key, '--version-id', 'null', '-o', old)).code).toBe(0);
    expect(readFileSync(old, 'utf8')).toBe('first version\n');

    // restoreVersion copies the old version over the latest, as a new version.
    const restored = await json<{ key: string; restoredFrom: string; versionId: string }>(
      'storage',
      'restore-version',
      name,
      key,
      'null',
    );
    expect(restored).toMatchObject({ key, restoredFrom: 'null' });
    expect([put2.versionId, 'null']).not.toContain(restored.versionId);
    expect((await cairn('storage', 'get', name, key)).stdout).toBe('first version\n');
    const three = await json<Versions>('storage', 'versions', name, key);
    expect(three.versions.map((v) => [v.versionId, v.isLatest])).toEqual([
      [restored.versionId, true],
      [put2.versionId, false],
      ['null', false],
    ]);

    // Delete: a delete marker becomes the latest; the versions stay readable.
    const removed = await json<{ key: string; deleteMarker: boolean; versionId: string }>('storage', 'rm', name, key);
    expect(removed).toMatchObject({ key, deleteMarker: true, versionId: expect.any(String) });
    const after = await json<Versions>('storage', 'versions', name, key);
    expect(after.versions.map((v) => [v.versionId, v.isLatest, v.isDeleteMarker])).toEqual([
      [removed.versionId, true, true],
      [restored.versionId, false, false],
      [put2.versionId, false, false],
      ['null', false, false],
    ]);
    const human = (await cairn('storage', 'versions', name, key)).stdout;
    expect(human.split('\n')[0]).toContain('delete marker');
    expect(human).toContain(`${put2.versionId}  `);
    const gone = await cairn('storage', 'get', name, key);
    expect(gone).toMatchObject({ code: 1, stdout: '' });
    expect(gone.stderr).toContain(`no object ${key}`);
    expect((await cairn('storage', 'get', name, key, '--version-id', put2.versionId)).stdout).toBe(
      'second version, longer\n',
    );
  });

  it('keeps odd keys and empty files, and deletes one version for good', async () => {
    const odd = 'a dir/ünïcode: 100%?.txt';
    const empty = join(dir, 'empty.txt');
    writeFileSync(empty, '');
    const put = await json<{ key: string; size: number; versionId: string }>('storage', 'put', name, odd, empty);
    expect(put).toMatchObject({ key: odd, size: 0 });
    expect(await cairn('storage', 'get', name, odd)).toMatchObject({ code: 0, stdout: '' });
    const full = join(dir, 'full.txt');
    writeFileSync(full, 'now with content');
    const second = await json<{ versionId: string }>('storage', 'put', name, odd, full);
    const removed = await json<{ deleteMarker: boolean }>('storage', 'rm', name, odd, '--version-id', second.versionId);
    expect(removed.deleteMarker).toBe(false);
    const left = await json<Versions>('storage', 'versions', name, odd);
    expect(left.versions.map((v) => [v.versionId, v.isLatest])).toEqual([[put.versionId, true]]);

    const missing = await cairn('storage', 'put', name, odd, join(dir, 'no-such-file.txt'));
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toContain('no-such-file.txt');
    expect(missing.stderr).not.toMatch(/\n\s+at /);
  });

  it('says what is wrong, with exit 1 and nothing on stdout, for a bucket that does not exist', async () => {
    const file = join(dir, 'x.txt');
    writeFileSync(file, 'x');
    for (const args of [
      ['get', 'no-such-bucket', 'x.txt'],
      ['put', 'no-such-bucket', 'x.txt', file, '--json'],
      ['versions', 'no-such-bucket', 'x.txt', '--json'],
      ['enable-versioning', 'no-such-bucket'],
    ]) {
      const r = await cairn('storage', ...args);
      expect(r, args.join(' ')).toMatchObject({ code: 1, stdout: '' });
      expect(r.stderr).toContain('no bucket named no-such-bucket in this environment');
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
