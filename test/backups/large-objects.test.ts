// Large objects and the one-transaction restore (blobs-filter.ts). pg_dump's plain format wraps
// large objects in its own BEGIN/COMMIT; replayed as printed, that COMMIT would commit the
// restore's transaction halfway, and a failure after it (here: an SQL error planted after the
// large objects, standing for any failure in the post-data section) would leave the target half
// restored. The dumps here come from the real pipeline: pg_dump → the zlib child → cairn-bk1.
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encryptStream } from '../../src/domain/backups/format/format.ts';
import { startDump } from '../../src/domain/backups/capture/dump.ts';
import { findTool } from '../../src/domain/backups/pgtools.ts';
import { replayStream } from '../../src/domain/backups/restore/apply.ts';
import { createAppDatabase, query, tableChecksums, type AppDatabase } from './support.ts';

let source: AppDatabase;
let target: AppDatabase;

// Random bytes, so the large objects span several 256 KiB segments of the encrypted stream. The
// rows of `lines` print in the dump as pg_dump's own header and BEGIN, line for line (COPY data),
// and must be restored as they are.
const sourceSql = `
create table docs (id int primary key, title text, blob oid);
create index docs_title on docs (title);
insert into docs select g, 'doc ' || g, lo_from_bytea(0, (select decode(string_agg(md5(random()::text || g || i), ''), 'hex') from generate_series(1, 1500) i))
  from generate_series(1, 40) g;
insert into docs values (100, E'BEGIN;\\nCOMMIT;', lo_from_bytea(0, 'BEGIN;'::bytea));
create table lines (v text);
insert into lines values ('--'), ('-- Data for Name: BLOBS; Type: BLOBS; Schema: -; Owner: -'), ('--'), (''), ('BEGIN;'), ('COMMIT;');
`;
const targetSql = `
create table keepsake (id int primary key, note text);
insert into keepsake values (1, 'only in the target');
select lo_from_bytea(0, 'the target''s own large object'::bytea);
`;

async function largeObjects(url: string): Promise<string[]> {
  const rows = await query<{ sum: string }>(
    url,
    `select md5(lo_get(oid)) as sum from pg_largeobject_metadata order by oid`,
  );
  return rows.map((r) => r.sum);
}

/** The gzip'd dump exactly as a backup makes it. */
async function dumpGz(url: string): Promise<Buffer> {
  const dump = startDump((await findTool('pg_dump')).path, url);
  const chunks: Buffer[] = [];
  for await (const c of dump.output) chunks.push(c as Buffer);
  await dump.finished;
  return Buffer.concat(chunks);
}

/** Seals the gzip'd dump as a backup does and replays it; `tamper` may change the sealed bytes. */
async function replay(gz: Buffer, url: string, tamper: (sealed: Buffer) => Buffer = (x) => x): Promise<void> {
  const key = randomBytes(32);
  async function* one() {
    yield gz;
  }
  const encrypted: Buffer[] = [];
  for await (const c of encryptStream(one(), key)) encrypted.push(c);
  const sealed = tamper(Buffer.concat(encrypted));
  async function* again() {
    for (let i = 0; i < sealed.length; i += 65536) yield sealed.subarray(i, i + 65536);
  }
  await replayStream(again(), key, url, null);
}

beforeAll(async () => {
  [source, target] = await Promise.all([createAppDatabase(sourceSql), createAppDatabase(targetSql)]);
});

afterAll(async () => {
  await source?.drop();
  await target?.drop();
});

describe('large objects in a restore', () => {
  it('a failure after the large objects leaves the target exactly as it was', async () => {
    const sql = gunzipSync(await dumpGz(source.url)).toString('utf8');
    // The dump really has pg_dump's own transaction around its large objects.
    expect(sql).toMatch(/-- Data for Name: BLOBS; Type: BLOBS;[^\n]*\n--\n\nBEGIN;\n/);
    // …and, in COPY data, the same lines spelled by rows of `lines`, which must not be touched.
    expect(sql).toContain(
      'COPY public.lines (v) FROM stdin;\n--\n-- Data for Name: BLOBS; Type: BLOBS; Schema: -; Owner: -\n--\n\nBEGIN;\nCOMMIT;\n\\.\n',
    );
    // Before the closing line, so the script is otherwise whole and psql's error is what stops it.
    const failing = sql.replace(
      '--\n-- PostgreSQL database dump complete',
      "SELECT 'planted failure after the large objects'::int;\n\n--\n-- PostgreSQL database dump complete",
    );
    expect(failing).not.toBe(sql);
    const tables = await tableChecksums(target.url);
    const objects = await largeObjects(target.url);
    expect(objects).toHaveLength(1);

    await expect(replay(gzipSync(failing), target.url)).rejects.toThrow(/planted failure|invalid input syntax/);
    expect(await tableChecksums(target.url)).toEqual(tables);
    expect(await largeObjects(target.url)).toEqual(objects);
  });

  it('a stream whose last segment is corrupt, after the large objects went in, leaves the target as it was', async () => {
    const gz = await dumpGz(source.url);
    expect(gz.length).toBeGreaterThan(3 * 256 * 1024);
    const tables = await tableChecksums(target.url);
    const objects = await largeObjects(target.url);
    await expect(
      replay(gz, target.url, (x) => {
        x[x.length - 20]! ^= 0x01;
        return x;
      }),
    ).rejects.toThrow(/authentication/);
    expect(await tableChecksums(target.url)).toEqual(tables);
    expect(await largeObjects(target.url)).toEqual(objects);
  });

  it('a dump whose large-object section lacks its COMMIT fails the restore instead of "succeeding" unchanged', async () => {
    // The filter takes the restore's own final COMMIT for the section's; psql would end inside
    // the transaction, roll back and exit 0 ("success"). The filter's closing error fails it.
    const sql = gunzipSync(await dumpGz(source.url)).toString('utf8');
    const cut = sql.replace(/(SELECT pg_catalog\.lo_close\(0\);\n\n)COMMIT;\n/, '$1');
    expect(cut).not.toBe(sql);
    const tables = await tableChecksums(target.url);
    await expect(replay(gzipSync(cut), target.url)).rejects.toThrow(
      /psql failed \(exit 3\):.*no COMMIT of its own; nothing was committed/s,
    );
    expect(await tableChecksums(target.url)).toEqual(tables);
  });

  it('a restore carries every large object across, with equal content', async () => {
    await replay(await dumpGz(source.url), target.url);
    expect(await tableChecksums(target.url)).toEqual(await tableChecksums(source.url));
    const [src, dst] = await Promise.all([largeObjects(source.url), largeObjects(target.url)]);
    expect(src).toHaveLength(41);
    expect(dst).toEqual(src);
    // The rows that spell pg_dump's header came across untouched, in order.
    expect(Object.keys(await tableChecksums(target.url))).toContain('public.lines');
    const lines = await query<{ v: string }>(target.url, 'select v from lines');
    expect(lines.map((r) => r.v)).toEqual([
      '--',
      '-- Data for Name: BLOBS; Type: BLOBS; Schema: -; Owner: -',
      '--',
      '',
      'BEGIN;',
      'COMMIT;',
    ]);
    // The oids the rows point at exist in the target (pg_dump keeps them).
    const [orphans] = await query<{ n: string }>(
      target.url,
      'select count(*) as n from docs where blob not in (select oid from pg_largeobject_metadata)',
    );
    expect(orphans!.n).toBe('0');
  });
});
