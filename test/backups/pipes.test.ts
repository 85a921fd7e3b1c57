// The child-process halves of backup and restore (pipes.ts): pg_dump into the zlib child, the
// zlib child into psql; pg_dump's, the compressor's and psql's failures named; a replay that
// stops before its COMMIT leaves the target as it was.
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptStream } from '../../src/domain/backups/format.ts';
import { findTool } from '../../src/domain/backups/pgtools.ts';
import { startDump } from '../../src/domain/backups/pipes.ts';
import { replayStream } from '../../src/domain/backups/restore.ts';
import { createAppDatabase, query, seedSource, tableChecksums, type AppDatabase } from './support.ts';

let source: AppDatabase;
let target: AppDatabase;
const key = Buffer.alloc(32, 9);

beforeAll(async () => {
  [source, target] = await Promise.all([createAppDatabase(seedSource), createAppDatabase('create table keep (id int primary key); insert into keep values (1), (2);')]);
});
afterAll(async () => {
  await source?.drop();
  await target?.drop();
});

async function collect(it: AsyncIterable<unknown>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of it) out.push(c as Buffer);
  return Buffer.concat(out);
}

async function* pieces(b: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}

/** A whole gzip'd dump, through startDump. */
async function dump(url = source.url): Promise<Buffer> {
  const d = startDump((await findTool('pg_dump')).path, url);
  const out = await collect(d.output);
  await d.finished;
  return out;
}

describe('pipes', () => {
  it('dumps plain SQL, gzip-compressed, without owners or grants', async () => {
    const sql = gunzipSync(await dump()).toString();
    expect(sql).toContain('CREATE TABLE public.customers');
    expect(sql).toContain('user2000@example.com');
    expect(sql).not.toMatch(/OWNER TO|GRANT /);
  });

  it("fails when pg_dump fails, with pg_dump's message", async () => {
    const missing = new URL(source.url);
    missing.pathname = '/cairn_no_such_database';
    await expect(dump(missing.toString())).rejects.toThrow(/pg_dump failed \(exit 1\):.*cairn_no_such_database/s);
  });

  it('replays a sealed dump in one transaction, replacing the target', async () => {
    const sealed = await collect(encryptStream(pieces(await dump(), 10_000), key));
    const into = await createAppDatabase('create table old (id int);');
    try {
      await replayStream(pieces(sealed, 50_000), key, into.url);
      expect(await tableChecksums(into.url)).toEqual(await tableChecksums(source.url));
    } finally {
      await into.drop();
    }
  });

  it("fails with psql's message on an SQL error, and the target is unchanged", async () => {
    const before = await tableChecksums(target.url);
    const script = Buffer.concat([gunzipSync(await dump()), Buffer.from('\nselect no_such_function();\n')]);
    const sealed = await collect(encryptStream(pieces((await import('node:zlib')).gzipSync(script), 10_000), key));
    await expect(replayStream(pieces(sealed, 50_000), key, target.url)).rejects.toThrow(/psql failed \(exit 3\):.*no_such_function/s);
    expect(await tableChecksums(target.url)).toEqual(before);
  });

  it('never commits a stream that stops early, whether it fails or simply ends', async () => {
    const before = await tableChecksums(target.url);
    const sealed = await collect(encryptStream(pieces(await dump(), 10_000), key));
    async function* failing(): AsyncGenerator<Buffer> {
      yield sealed.subarray(0, 30_000);
      throw new Error('the download broke');
    }
    await expect(replayStream(failing(), key, target.url)).rejects.toThrow('the download broke');
    // A cut object: the last segment lacks its last flag, so it never authenticates.
    await expect(replayStream(pieces(sealed.subarray(0, sealed.length - 1), 50_000), key, target.url)).rejects.toThrow(/authentication/);
    expect(await tableChecksums(target.url)).toEqual(before);
    expect(await query(target.url, 'select count(*)::int as n from keep')).toEqual([{ n: 2 }]);
  });
});

it('fails naming gunzip, and commits nothing, when the authenticated content is not whole gzip', async () => {
  const before = await tableChecksums(target.url);
  const gz = await dump();
  // Authentic segments around a cut gzip stream: only the decompressor can tell.
  const sealed = await collect(encryptStream(pieces(gz.subarray(0, gz.length - 100), 10_000), key));
  await expect(replayStream(pieces(sealed, 50_000), key, target.url)).rejects.toThrow(/gunzip failed \(exit 1\)|psql failed/);
  expect(await tableChecksums(target.url)).toEqual(before);
});
