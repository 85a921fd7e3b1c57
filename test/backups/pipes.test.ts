// The child-process halves of backup and restore (pipes.ts): pg_dump into the zlib child, the
// zlib child into psql; pg_dump's, the compressor's and psql's failures named; a replay that
// stops before its COMMIT, or whose script is not the whole dump, leaves the target as it was.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptStream } from '../../src/domain/backups/format/format.ts';
import { findTool } from '../../src/domain/backups/pgtools.ts';
import { IncompleteDumpError, startReplay } from '../../src/domain/backups/restore/replay.ts';
import { startDump } from '../../src/domain/backups/capture/dump.ts';
import { startInspect } from '../../src/domain/backups/capture/inspect.ts';
import { replayStream } from '../../src/domain/backups/restore/apply.ts';
import { wipePreamble } from '../../src/domain/backups/restore/wipe.ts';
import { createAppDatabase, query, seedSource, tableChecksums, type AppDatabase } from './support.ts';

let source: AppDatabase;
let target: AppDatabase;
const key = Buffer.alloc(32, 9);

beforeAll(async () => {
  [source, target] = await Promise.all([
    createAppDatabase(seedSource),
    createAppDatabase('create table keep (id int primary key); insert into keep values (1), (2);'),
  ]);
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
  it('dumps plain SQL, gzip-compressed, with owners and grants', async () => {
    const sql = gunzipSync(await dump()).toString();
    expect(sql).toContain('CREATE TABLE public.customers');
    expect(sql).toContain('user2000@example.com');
    expect(sql).toMatch(/^ALTER TABLE public\.customers OWNER TO \w+;$/m);
  });

  it("fails when pg_dump fails, with pg_dump's message", async () => {
    const missing = new URL(source.url);
    missing.pathname = '/cairn_no_such_database';
    await expect(dump(missing.toString())).rejects.toThrow(/pg_dump failed \(exit 1\):.*cairn_no_such_database/s);
  });

  it('keeps the whole output when it is read only after pg_dump and the compressor have exited', async () => {
    // Node drops what an exited child's unread stdout held (flushStdio): the first backup of a
    // fresh worker, whose first S3 request outlasted a small dump, came out empty.
    const d = startDump((await findTool('pg_dump')).path, source.url);
    const figures = await d.finished;
    await new Promise((r) => setImmediate(r));
    const sql = gunzipSync(await collect(d.output));
    expect(sql.length).toBe(figures.bytes);
    expect(createHash('sha256').update(sql).digest('hex')).toBe(figures.sha256);
    expect(sql.toString()).toContain('user2000@example.com');
  });

  it('inspects a script: its figures, whether it is whole, and per-table rows', async () => {
    const gz = await dump();
    const inspect = async (bytes: Buffer) => {
      const i = startInspect({ gzipped: true });
      i.input.end(bytes);
      return i.finished;
    };
    const whole = await inspect(gz);
    const sql = gunzipSync(gz);
    expect(whole).toMatchObject({
      bytes: sql.length,
      sha256: createHash('sha256').update(sql).digest('hex'),
      incomplete: null,
    });
    expect(Object.fromEntries(Object.entries(whole.tables).map(([t, f]) => [t, f.rows]))).toEqual({
      'billing.invoices': 500,
      'public.customers': 2000,
      'public.orders': 6000,
    });
    const cut = await inspect(gzipSync(sql.subarray(0, sql.indexOf('CREATE INDEX'))));
    expect(cut.incomplete).toMatch(/closing line/);
    expect((await inspect(gzipSync(''))).incomplete).toBe('the dump is empty');
    const notGzip = startInspect({ gzipped: true });
    notGzip.input.end(Buffer.from('not gzip at all'));
    await expect(notGzip.finished).rejects.toThrow(/inspector failed \(exit 1\)/);
  });

  it('refuses a script that is whole gzip but not the whole dump, or not the one recorded, and the target is unchanged', async () => {
    const before = await tableChecksums(target.url);
    const sql = gunzipSync(await dump());
    const figures = { bytes: sql.length, sha256: createHash('sha256').update(sql).digest('hex') };
    const seal = async (script: Buffer) => collect(encryptStream(pieces(gzipSync(script), 10_000), key));
    // Cut at a line boundary after the data: every statement is valid, only the end is missing.
    const short = sql.subarray(0, sql.indexOf('ALTER TABLE ONLY'));
    await expect(replayStream(pieces(await seal(short), 50_000), key, target.url, null)).rejects.toThrow(
      IncompleteDumpError,
    );
    await expect(replayStream(pieces(await seal(Buffer.alloc(0)), 50_000), key, target.url, null)).rejects.toThrow(
      /empty/,
    );
    await expect(replayStream(pieces(await seal(short), 50_000), key, target.url, figures)).rejects.toThrow(
      /holds \d+ bytes of SQL where pg_dump wrote/,
    );
    const changed = Buffer.from(
      sql.toString('latin1').replace('user1999@example.com', 'user1999@example.org'),
      'latin1',
    );
    await expect(replayStream(pieces(await seal(changed), 50_000), key, target.url, figures)).rejects.toThrow(
      /differs from what pg_dump wrote/,
    );
    expect(await tableChecksums(target.url)).toEqual(before);
    expect(await query(target.url, 'select count(*)::int as n from keep')).toEqual([{ n: 2 }]);
    // And the very same script, recorded figures and all, restores.
    const into = await createAppDatabase('create table old (id int);');
    try {
      await replayStream(pieces(await seal(sql), 50_000), key, into.url, figures);
      expect(await tableChecksums(into.url)).toEqual(await tableChecksums(source.url));
    } finally {
      await into.drop();
    }
  });

  it('replays a sealed dump in one transaction, replacing the target', async () => {
    const sealed = await collect(encryptStream(pieces(await dump(), 10_000), key));
    const into = await createAppDatabase('create table old (id int);');
    try {
      await replayStream(pieces(sealed, 50_000), key, into.url, null);
      expect(await tableChecksums(into.url)).toEqual(await tableChecksums(source.url));
    } finally {
      await into.drop();
    }
  });

  it('takes the roles of a server with more of them than a command line holds', async () => {
    // 20,000 roles of ~40 bytes: some 800 KB of JSON, where one argument holds at most 128 KiB.
    const roles: Record<string, boolean> = Object.fromEntries(
      Array.from({ length: 20_000 }, (_, i) => [`tenant_${String(i).padStart(6, '0')}_${'r'.repeat(24)}`, false]),
    );
    roles.postgres = true;
    const into = await createAppDatabase('create table old (id int);');
    try {
      const r = startReplay((await findTool('psql')).path, into.url, {
        preamble: wipePreamble,
        expected: null,
        roles: { roles, superuser: false, current: 'postgres' },
      });
      await pipeline(Readable.from([await dump()]), r.input);
      expect(await r.ready).toMatchObject({ refused: null, skipped: { statements: 0, roles: [] } });
      expect(await r.xid).toMatch(/^\d+$/);
      r.confirm();
      await r.finished;
      expect(await tableChecksums(into.url)).toEqual(await tableChecksums(source.url));
    } finally {
      await into.drop();
    }
  });

  it("fails with psql's message on an SQL error, and the target is unchanged", async () => {
    const before = await tableChecksums(target.url);
    // Inside an otherwise whole script: its closing line still ends it.
    const sql = gunzipSync(await dump()).toString();
    const at = sql.indexOf('--\n-- PostgreSQL database dump complete');
    const script = Buffer.from(`${sql.slice(0, at)}select no_such_function();\n${sql.slice(at)}`);
    const sealed = await collect(encryptStream(pieces((await import('node:zlib')).gzipSync(script), 10_000), key));
    await expect(replayStream(pieces(sealed, 50_000), key, target.url, null)).rejects.toThrow(
      /psql failed \(exit 3\):.*no_such_function/s,
    );
    expect(await tableChecksums(target.url)).toEqual(before);
  });

  it('never commits a stream that stops early, whether it fails or simply ends', async () => {
    const before = await tableChecksums(target.url);
    const sealed = await collect(encryptStream(pieces(await dump(), 10_000), key));
    async function* failing(): AsyncGenerator<Buffer> {
      yield sealed.subarray(0, 30_000);
      throw new Error('the download broke');
    }
    await expect(replayStream(failing(), key, target.url, null)).rejects.toThrow('the download broke');
    // A cut object: the last segment lacks its last flag, so it never authenticates.
    await expect(
      replayStream(pieces(sealed.subarray(0, sealed.length - 1), 50_000), key, target.url, null),
    ).rejects.toThrow(/authentication/);
    expect(await tableChecksums(target.url)).toEqual(before);
    expect(await query(target.url, 'select count(*)::int as n from keep')).toEqual([{ n: 2 }]);
  });
});

it('fails naming gunzip, and commits nothing, when the authenticated content is not whole gzip', async () => {
  const before = await tableChecksums(target.url);
  const gz = await dump();
  // Authentic segments around a cut gzip stream: only the decompressor can tell.
  const sealed = await collect(encryptStream(pieces(gz.subarray(0, gz.length - 100), 10_000), key));
  await expect(replayStream(pieces(sealed, 50_000), key, target.url, null)).rejects.toThrow(
    /does not decompress \(unexpected end of file\)/,
  );
  expect(await tableChecksums(target.url)).toEqual(before);
});
