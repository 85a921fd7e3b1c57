// A sentry-cli artifact bundle is a zip a tenant uploads and a shared worker opens, so a bundle
// must not be able to move that worker's memory by more than one file's limit (50 MiB), whatever
// its headers say: a ~300 KiB zip whose one file inflates to 300 MiB is refused from its central
// directory, before a byte is inflated; the same file behind headers that declare 1 KiB is stopped
// as soon as it inflates past that; bundles over the total or the file-count limit are refused the
// same way, and so is a ~1 MiB bundle whose files declare 1000 MiB (under the 1 GiB cap, over 20
// times the bundle's size), which was inflated twice and stored whole. A bundle whose map does not
// parse, or whose file has a URL no row can hold, is refused before anything is stored: a good
// file before it used to be stored first. Each ends in Sentry's `error` state with a detail naming
// the file, and nothing of it is stored. Through the routes sentry-cli calls (chunk upload, then
// assemble), with the worker a real process whose resident memory is sampled throughout; a
// legitimate bundle still lands, and a chunk whose gzip inflates past the chunk size is refused at upload.
import { createHash, randomBytes } from 'node:crypto';
import { crc32, createDeflateRaw, deflateRawSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceMapBucket } from '../../src/domain/errors/source-maps/uploads.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { parseEnvName } from '../../src/domain/tenancy/names.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { call, createTestEnv, sqlNumber, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { spawnWorker, type WebProcess } from '../support/web-process.ts';

const MiB = 1024 * 1024;
let h: Harness;
let env: CreatedEnv;
let web: WebHandle;
let worker: Omit<WebProcess, 'url'>;
const prefix = `cbb-${randomBytes(3).toString('hex')}-`;

const stack = useWeb({}, { CAIRN_STORAGE_BUCKET_PREFIX: prefix });
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  const s3 = Object.fromEntries(
    ['AWS_ENDPOINT_URL_S3', 'AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'CAIRN_S3_FORCE_PATH_STYLE']
      .filter((name) => process.env[name] !== undefined)
      .map((name) => [name, process.env[name]!]),
  );
  worker = await spawnWorker(h.database.url, { ...s3, CAIRN_STORAGE_BUCKET_PREFIX: prefix });
}, 60_000);
afterAll(async () => {
  await worker?.stop();
  await createObjectStore(h.config)
    .deleteBucket(sourceMapBucket(h.config))
    .catch(() => undefined);
});

// ---- zip files, written by hand so that their headers can say what a test needs ----

interface Entry {
  name: string;
  /** The entry's bytes as stored: deflated (method 8) or not (method 0). */
  data: Buffer;
  method: 0 | 8;
  crc: number;
  /** The inflated size the local header and the central directory declare. */
  size: number;
}

const deflated = (name: string, content: Buffer | string): Entry => {
  const bytes = Buffer.from(content);
  return { name, data: deflateRawSync(bytes), method: 8, crc: crc32(bytes), size: bytes.length };
};

/** `size` zero bytes, deflated as a stream (the inflated bytes never exist in this process). */
async function zeros(name: string, size: number): Promise<Entry> {
  const block = Buffer.alloc(MiB);
  const deflater = createDeflateRaw({ level: 9 });
  const out: Buffer[] = [];
  deflater.on('data', (b: Buffer) => out.push(b));
  const done = new Promise((resolve, reject) => deflater.on('end', resolve).on('error', reject));
  let crc = 0;
  for (let left = size; left > 0; left -= MiB) {
    const piece = block.subarray(0, Math.min(MiB, left));
    crc = crc32(piece, crc);
    if (!deflater.write(piece)) await new Promise((r) => deflater.once('drain', r));
  }
  deflater.end();
  await done;
  return { name, data: Buffer.concat(out), method: 8, crc, size };
}

function zip(entries: Entry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x800, 6);
    local.writeUInt16LE(e.method, 8);
    local.writeUInt16LE(0x21, 12);
    local.writeUInt32LE(e.crc >>> 0, 14);
    local.writeUInt32LE(e.data.length, 18);
    local.writeUInt32LE(e.size, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x800, 8);
    central.writeUInt16LE(e.method, 10);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(e.crc >>> 0, 16);
    central.writeUInt32LE(e.data.length, 20);
    central.writeUInt32LE(e.size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, e.data);
    centrals.push(central, name);
    offset += 30 + name.length + e.data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** A bundle as sentry-cli writes one: manifest.json naming each file's URL and type. */
function bundle(release: string, files: { entry: Entry; url: string; type: string; headers?: object }[]): Buffer {
  const manifest = {
    org: parseEnvName(env.env.name)!.org,
    release,
    files: Object.fromEntries(files.map((f) => [f.entry.name, { url: f.url, type: f.type, headers: f.headers ?? {} }])),
  };
  return zip([deflated('manifest.json', JSON.stringify(manifest)), ...files.map((f) => f.entry)]);
}

function legitimate(release: string): Buffer {
  const map = { version: 3, file: 'app.min.js', sources: ['app.ts'], names: [], mappings: 'AAAA' };
  return bundle(release, [
    {
      entry: deflated(
        'files/_/_/app.min.js',
        'function a(){throw new Error("x")}a();\n//# sourceMappingURL=app.min.js.map',
      ),
      url: '~/app.min.js',
      type: 'minified_source',
      headers: { sourcemap: 'app.min.js.map' },
    },
    { entry: deflated('files/_/_/app.min.js.map', JSON.stringify(map)), url: '~/app.min.js.map', type: 'source_map' },
  ]);
}

// ---- sentry-cli's calls ----

const sha1 = (b: Buffer) => createHash('sha1').update(b).digest('hex');
const org = () => parseEnvName(env.env.name)!.org;
const project = () => parseEnvName(env.env.name)!.project;

/** POSTs the chunks as sentry-cli does: multipart `file_gzip` parts named by the SHA-1 of their bytes. */
async function uploadChunks(chunks: Buffer[]): Promise<Response> {
  const form = new FormData();
  for (const c of chunks) form.append('file_gzip', new Blob([gzipSync(c)]), sha1(c));
  return fetch(`${web.url}/api/0/organizations/${org()}/chunk-upload/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.secretKey}` },
    body: form,
  });
}

type Assembly = { state: string; missingChunks: string[]; detail: string | null };
const assemble = async (zipFile: Buffer, chunks: Buffer[], release: string) =>
  call<Assembly>(web.url, 'POST', `/api/0/organizations/${org()}/artifactbundle/assemble/`, {
    key: env.secretKey,
    body: { checksum: sha1(zipFile), chunks: chunks.map(sha1), projects: [project()], version: release },
  });

/**
 * Uploads and assembles a bundle, polling assemble (as `sentry-cli --wait` does) until it is `ok` or
 * `error`, while sampling the worker's resident memory; answers the last state and the peak RSS.
 */
async function upload(zipFile: Buffer, release: string): Promise<{ answer: Assembly; peakRss: number }> {
  const chunks: Buffer[] = [];
  for (let at = 0; at < zipFile.length; at += 4 * MiB) chunks.push(zipFile.subarray(at, at + 4 * MiB));
  const first = await assemble(zipFile, chunks, release);
  expect(first.body).toMatchObject({ state: 'not_found' });
  expect((await uploadChunks(chunks)).status).toBe(200);
  let peakRss = worker.rss();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakRss = Math.max(peakRss, worker.rss());
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  try {
    const answer = await eventually(
      async () => {
        const r = await assemble(zipFile, chunks, release);
        expect(r.status).toBe(200);
        return ['ok', 'error'].includes(r.body.state) ? r.body : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 200 },
    );
    return { answer, peakRss };
  } finally {
    sampling = false;
    await sampler;
  }
}

const store = () => createObjectStore(h.config);
async function storedFiles(release: string) {
  const rows =
    (await sqlNumber(h.db, 'select count(*) from error_source_maps where env_id = ? and release = ?', [
      env.env.id,
      release,
    ])) +
    (await sqlNumber(h.db, 'select count(*) from error_minified_sources where env_id = ? and release = ?', [
      env.env.id,
      release,
    ]));
  const objects = [
    ...(await store().list(sourceMapBucket(h.config), `source-maps/${env.env.id}/`)),
    ...(await store().list(sourceMapBucket(h.config), `minified-sources/${env.env.id}/`)),
  ].map((o) => o.key);
  return { rows, objects };
}

/** The worker may grow by one file's limit (50 MiB) and a margin for its own allocator and GC. */
const allowedGrowth = 50 * MiB + 20 * MiB;
let baselineRss = 0;

describe('artifact bundles that inflate past the limits', () => {
  it('a legitimate bundle lands (and warms the worker up)', async () => {
    const { answer } = await upload(legitimate('good-1'), 'good-1');
    expect(answer).toMatchObject({ state: 'ok', detail: null });
    expect((await storedFiles('good-1')).rows).toBe(2);
    baselineRss = worker.rss();
  }, 240_000);

  it('refuses a ~300 KiB zip whose one file declares 300 MiB, from its central directory', async () => {
    const before = await storedFiles('bomb-1');
    const bomb = bundle('bomb-1', [
      { entry: await zeros('files/_/_/bomb.min.js', 300 * MiB), url: '~/bomb.min.js', type: 'minified_source' },
    ]);
    expect(bomb.length).toBeLessThan(400 * 1024);
    const { answer, peakRss } = await upload(bomb, 'bomb-1');
    expect(answer.state).toBe('error');
    expect(answer.detail).toContain('files/_/_/bomb.min.js');
    expect(answer.detail).toMatch(/declares 314572800 bytes, more than the 52428800/);
    expect(await storedFiles('bomb-1')).toEqual({ rows: 0, objects: before.objects });
    expect(peakRss - baselineRss).toBeLessThan(allowedGrowth);
    // Asked again, the error stays the answer (as Sentry's does): the client sees it, not a new try.
    const repeat = await assemble(bomb, [bomb], 'bomb-1');
    expect(repeat.body).toMatchObject({ state: 'error', detail: answer.detail });
    // Once the 10-minute hold has passed it is tried anew, and refused the same way.
    await h
      .db('artifact_bundle_assemblies')
      .where({ env_id: env.env.id, checksum: sha1(bomb) })
      .update({ update_time: h.db.raw("now() - interval '11 minutes'") });
    expect((await assemble(bomb, [bomb], 'bomb-1')).body).toMatchObject({ state: 'created', detail: null });
    const retried = await eventually(async () => {
      const r = await assemble(bomb, [bomb], 'bomb-1');
      return r.body.state === 'error' ? r.body : undefined;
    });
    expect(retried.detail).toBe(answer.detail);
  }, 240_000);

  it('stops the same file behind headers that declare 1 KiB as soon as it inflates past that', async () => {
    const before = await storedFiles('bomb-2');
    const real = await zeros('files/_/_/liar.min.js', 300 * MiB);
    const liar: Entry = { ...real, size: 1024, crc: crc32(Buffer.alloc(1024)) };
    const bomb = bundle('bomb-2', [
      // A true file before it in the archive: stored only if every file checks out, so not at all.
      {
        entry: deflated('files/_/_/fine.min.js', 'function f(){}'),
        url: '~/fine.min.js',
        type: 'minified_source',
      },
      { entry: liar, url: '~/liar.min.js', type: 'minified_source' },
    ]);
    const { answer, peakRss } = await upload(bomb, 'bomb-2');
    expect(answer.state).toBe('error');
    expect(answer.detail).toContain('files/_/_/liar.min.js');
    expect(answer.detail).toMatch(/inflates to more than the 1024 bytes its header declares/);
    expect(await storedFiles('bomb-2')).toEqual({ rows: 0, objects: before.objects });
    expect(peakRss - baselineRss).toBeLessThan(allowedGrowth);
  }, 240_000);

  it('refuses a bundle over the total size, naming the file where it passes it', async () => {
    // 25 files of 45 MiB each (one deflated blob, named 25 times): each under 50 MiB, 1.1 GiB in all.
    const blob = await zeros('x', 45 * MiB);
    const big = bundle(
      'bomb-3',
      Array.from({ length: 25 }, (_, i) => ({
        entry: { ...blob, name: `files/_/_/part-${i}.js` },
        url: `~/part-${i}.js`,
        type: 'minified_source',
      })),
    );
    const { answer, peakRss } = await upload(big, 'bomb-3');
    expect(answer.state).toBe('error');
    expect(answer.detail).toMatch(
      /more than the 1073741824 bytes a bundle may hold in all \(at "files\/_\/_\/part-\d+\.js"\)/,
    );
    expect(peakRss - baselineRss).toBeLessThan(allowedGrowth);
    expect((await storedFiles('bomb-3')).rows).toBe(0);
  }, 480_000);

  it('refuses a ~1 MiB bundle that declares 1000 MiB, more than 20 times its size, from its central directory', async () => {
    // 20 files of 50 MiB of zeros, each within the file limit, with true CRCs, 1000 MiB in all:
    // under the 1 GiB cap, but a bundle may inflate to 20 times what it weighs (past its first MiB).
    const before = await storedFiles('bomb-5');
    const blob = await zeros('x', 50 * MiB);
    const dense = bundle(
      'bomb-5',
      Array.from({ length: 20 }, (_, i) => ({
        entry: { ...blob, name: `files/_/_/zero-${i}.js` },
        url: `~/zero-${i}.js`,
        type: 'minified_source',
      })),
    );
    expect(dense.length).toBeLessThan(2 * MiB);
    const { answer, peakRss } = await upload(dense, 'bomb-5');
    expect(answer.state).toBe('error');
    expect(answer.detail).toBe(
      `the bundle's files declare more than the ${20 * dense.length} bytes a bundle of ${dense.length} bytes may hold inflated, 20 times its size (at "files/_/_/zero-0.js")`,
    );
    expect(await storedFiles('bomb-5')).toEqual({ rows: 0, objects: before.objects });
    expect(peakRss - baselineRss).toBeLessThan(allowedGrowth);
  }, 480_000);

  it('refuses a bundle whose map is not one, after a good file, naming the map and storing nothing', async () => {
    const before = await storedFiles('bad-map');
    for (const [text, reason] of [
      ['{"version": 3, "sources": ["a.ts"], "mappings": "AAAA"', 'source_map is not JSON'],
      ['{"version": 3, "mappings": 5}', 'source_map is not a valid source map (ECMA-426 version 3)'],
    ] as const) {
      const broken = bundle('bad-map', [
        // A good file first in the archive: stored only if every file checks out, so not at all.
        { entry: deflated('files/_/_/ok.min.js', 'function ok(){}'), url: '~/ok.min.js', type: 'minified_source' },
        { entry: deflated('files/_/_/broken.js.map', text), url: '~/broken.js.map', type: 'source_map' },
      ]);
      const { answer } = await upload(broken, 'bad-map');
      expect(await storedFiles('bad-map')).toEqual({ rows: 0, objects: before.objects });
      expect(answer).toEqual({
        state: 'error',
        missingChunks: [],
        detail: `the bundle's file "files/_/_/broken.js.map" (~/broken.js.map): ${reason}`,
      });
    }
  }, 240_000);

  it('refuses a bundle naming a file by a URL no row can hold, after a good file, storing nothing', async () => {
    const before = await storedFiles('bad-url');
    // 1,000 CJK characters that do not repeat: 3,000 bytes, past what Postgres indexes in a row.
    const wide = Array.from({ length: 1000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20000))).join('');
    for (const url of [`~/${wide}.js`, '~/nul\u0000.js']) {
      const refused = bundle('bad-url', [
        { entry: deflated('files/_/_/ok.min.js', 'function ok(){}'), url: '~/ok.min.js', type: 'minified_source' },
        { entry: deflated('files/_/_/odd.min.js', 'function odd(){}'), url, type: 'minified_source' },
      ]);
      const { answer } = await upload(refused, 'bad-url');
      expect(answer).toMatchObject({
        state: 'error',
        detail: expect.stringContaining('"files/_/_/odd.min.js" has a URL'),
      });
      expect(await storedFiles('bad-url')).toEqual({ rows: 0, objects: before.objects });
    }
  }, 240_000);

  it('refuses a bundle of more than 10,000 files', async () => {
    const empty = deflated('x', '');
    const many = zip([
      deflated('manifest.json', '{"files":{}}'),
      ...Array.from({ length: 10_000 }, (_, i) => ({ ...empty, name: `files/${i}.js` })),
    ]);
    const { answer } = await upload(many, 'bomb-4');
    expect(answer).toMatchObject({
      state: 'error',
      detail: expect.stringMatching(/holds 10001 files, more than the 10000/),
    });
    expect((await storedFiles('bomb-4')).rows).toBe(0);
  }, 240_000);

  it('still lands a legitimate bundle afterwards', async () => {
    const { answer } = await upload(legitimate('good-2'), 'good-2');
    expect(answer).toMatchObject({ state: 'ok', detail: null });
    const files = await call<{ minified_sources: { file: string }[] }>(
      web.url,
      'GET',
      `/v1/${env.env.name}/releases/good-2/minified_sources`,
      { key: env.secretKey },
    );
    expect(files.body.minified_sources.map((f) => f.file)).toEqual(['~/app.min.js']);
    expect((await storedFiles('good-2')).rows).toBe(2);
  }, 240_000);
});

describe('chunks', () => {
  it('refuses a gzip part that inflates past the chunk size, and keeps nothing', async () => {
    const inflated = Buffer.alloc(64 * MiB);
    const form = new FormData();
    form.append('file_gzip', new Blob([gzipSync(inflated, { level: 9 })]), sha1(inflated));
    const res = await fetch(`${web.url}/api/0/organizations/${org()}/chunk-upload/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.secretKey}` },
      body: form,
    });
    expect(res.status).toBe(413);
    expect(await sqlNumber(h.db, 'select count(*) from sentry_chunks where sha1 = ?', [sha1(inflated)])).toBe(0);

    const notGzip = new FormData();
    notGzip.append('file_gzip', new Blob([Buffer.from('not gzip at all')]), sha1(Buffer.from('not gzip at all')));
    const refused = await fetch(`${web.url}/api/0/organizations/${org()}/chunk-upload/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.secretKey}` },
      body: notGzip,
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      code: 'invalid_request',
      message: 'a file_gzip part does not gunzip',
    });
  });
});
