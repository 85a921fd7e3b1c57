// `cairn storage …` as an operator runs it: the real command in a child process, over the HTTP
// API (CAIRN_API_URL, CAIRN_SECRET_KEY), against radosgw. Versioning end to end: two uploads, the
// older one read back by version, restored over the latest, then a delete marker.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { createHarness, createTestEnv, startTestWeb, type Harness } from '../support/harness.ts';

const exec = promisify(execFile);
let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let dir: string;

beforeAll(async () => {
  h = await createHarness({ CAIRN_STORAGE_BUCKET_PREFIX: `ccli-${randomBytes(3).toString('hex')}-` });
  web = await startTestWeb(h);
  env = await createTestEnv(h.db);
  dir = mkdtempSync(join(tmpdir(), 'cairn-storage-cli-'));
});

afterAll(async () => {
  const store = createObjectStore(h.config);
  for (const b of await h.db('storage_buckets').select('s3_bucket')) await store.deleteBucket(b.s3_bucket).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
  await web?.stop();
  await h?.close();
});

async function cairn(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const out = await exec(process.execPath, ['bin/cairn.js', 'storage', ...args, '--env', env.env.name], {
      env: { PATH: process.env.PATH ?? '', CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: env.secretKey },
    });
    return { code: 0, stdout: out.stdout, stderr: out.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const json = async <T>(...args: string[]): Promise<T> => {
  const res = await cairn(...args, '--json');
  expect(res, res.stderr).toMatchObject({ code: 0 });
  return JSON.parse(res.stdout) as T;
};

type Version = { versionId: string; isLatest: boolean; isDeleteMarker: boolean; size: number };

it('creates a versioned bucket, keeps every upload and restores an older version', async () => {
  expect(await json('buckets', 'create', 'docs')).toMatchObject({ bucket: 'docs', versioning: 'disabled' });
  expect(await json('enable-versioning', 'docs')).toMatchObject({ versioning: 'enabled' });
  expect(await json<{ buckets: { bucket: string }[] }>('buckets', 'list')).toMatchObject({ buckets: [{ bucket: 'docs', versioning: 'enabled' }] });

  const key = 'reports/2026:q3.txt';
  const file = join(dir, 'report.txt');
  writeFileSync(file, 'first draft\n');
  const v1 = await json<{ versionId: string }>('put', 'docs', key, file, '--content-type', 'text/plain');
  writeFileSync(file, 'second draft, longer\n');
  const v2 = await json<{ versionId: string }>('put', 'docs', key, file);
  expect(v1.versionId).not.toBe(v2.versionId);

  const { versions } = await json<{ versions: Version[] }>('versions', 'docs', key);
  expect(versions.map((v) => [v.versionId, v.isLatest])).toEqual([[v2.versionId, true], [v1.versionId, false]]);

  const old = join(dir, 'old.txt');
  expect((await cairn('get', 'docs', key, '--version-id', v1.versionId, '-o', old)).code).toBe(0);
  expect(readFileSync(old, 'utf8')).toBe('first draft\n');

  const restored = await json<{ versionId: string; restoredFrom: string }>('restore-version', 'docs', key, v1.versionId);
  expect(restored.restoredFrom).toBe(v1.versionId);
  expect((await cairn('get', 'docs', key)).stdout).toBe('first draft\n');
  expect((await json<{ versions: Version[] }>('versions', 'docs', key)).versions).toHaveLength(3);

  expect(await json('rm', 'docs', key)).toMatchObject({ deleteMarker: true });
  const after = (await json<{ versions: Version[] }>('versions', 'docs', key)).versions;
  expect(after[0]).toMatchObject({ isLatest: true, isDeleteMarker: true });
  expect(after).toHaveLength(4);
  const human = await cairn('versions', 'docs', key);
  expect(human.stdout).toContain('delete marker');
  expect(human.stdout).toContain(`${v1.versionId}  `);
});

it('exits non-zero with the API error for a bucket that does not exist', async () => {
  const res = await cairn('versions', 'nope', 'k');
  expect(res.code).not.toBe(0);
  expect(res.stderr).toMatch(/not_found|no bucket/i);
});
