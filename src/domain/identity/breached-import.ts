// Loading the local breached-password store: `cairn admin breached import FILE` turns
// each line into a full SHA-1 digest on the operator's machine (a plain password list never
// reaches the database in clear), streams the digests in chunks, and enqueues one job; the worker
// merges them into the sorted ranges. Merging is a union, so a retried job changes nothing.
import type { Knex } from 'knex';
import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { newId } from '../../ids.ts';
import type { Jobs } from '../../jobs.ts';
import { packSuffixes, parseImportLine, splitHash, unpackSuffixes, type ImportFormat } from './breached-format.ts';

const chunkEntries = 20_000;
const flushEntries = 200_000;

export async function stageImport(
  db: Knex,
  jobs: Jobs,
  input: Readable,
  format: ImportFormat,
  rangePrefix?: string,
): Promise<{ id: string; entries: number }> {
  const id = newId('bimp');
  await db('breached_imports').insert({ id, state: 'pending', format });
  let seq = 0;
  let entries = 0;
  let batch: string[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await db('breached_import_chunks').insert({ import_id: id, seq: seq++, data: Buffer.from(batch.join(''), 'hex') });
    entries += batch.length;
    batch = [];
  };
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    const hex = parseImportLine(line, format, rangePrefix);
    if (!hex) continue;
    batch.push(hex);
    if (batch.length >= chunkEntries) await flush();
  }
  await flush();
  await db.transaction(async (trx) => {
    await trx('breached_imports').where({ id }).update({ entries });
    await jobs.enqueue(trx, 'identity.breached-import', { import_id: id });
  });
  return { id, entries };
}

async function mergeRanges(db: Knex, ranges: Map<number, Buffer[]>): Promise<void> {
  const prefixes = [...ranges.keys()].sort((a, b) => a - b);
  for (let i = 0; i < prefixes.length; i += 1000) {
    const slice = prefixes.slice(i, i + 1000);
    await db.transaction(async (trx) => {
      const existing = (await trx('breached_ranges')
        .whereIn('prefix', slice)
        .forUpdate()
        .select('prefix', 'suffixes')) as { prefix: number; suffixes: Buffer }[];
      const old = new Map(existing.map((r) => [r.prefix, r.suffixes]));
      const rows = slice.map((prefix) => ({
        prefix,
        suffixes: packSuffixes([...unpackSuffixes(old.get(prefix) ?? Buffer.alloc(0)), ...ranges.get(prefix)!]),
      }));
      await trx('breached_ranges').insert(rows).onConflict('prefix').merge(['suffixes']);
    });
  }
}

/** Worker side: merges the staged digests, then drops them. */
export async function mergeImport(db: Knex, importId: string): Promise<void> {
  const imp = (await db('breached_imports').where({ id: importId }).first('state')) as { state: string } | undefined;
  if (!imp || imp.state === 'succeeded') return;
  await db('breached_imports').where({ id: importId }).update({ state: 'running' });
  let ranges = new Map<number, Buffer[]>();
  let pending = 0;
  let seq = -1;
  for (;;) {
    const chunk = (await db('breached_import_chunks')
      .where({ import_id: importId })
      .where('seq', '>', seq)
      .orderBy('seq')
      .first('seq', 'data')) as { seq: number; data: Buffer } | undefined;
    if (!chunk) break;
    seq = chunk.seq;
    for (let off = 0; off + 20 <= chunk.data.length; off += 20) {
      const { prefix, suffix } = splitHash(
        chunk.data
          .subarray(off, off + 20)
          .toString('hex')
          .toUpperCase(),
      );
      let list = ranges.get(prefix);
      if (!list) ranges.set(prefix, (list = []));
      list.push(suffix);
      pending += 1;
    }
    if (pending >= flushEntries) {
      await mergeRanges(db, ranges);
      ranges = new Map();
      pending = 0;
    }
  }
  await mergeRanges(db, ranges);
  await db.transaction(async (trx) => {
    await trx('breached_import_chunks').where({ import_id: importId }).delete();
    await trx('breached_imports').where({ id: importId }).update({ state: 'succeeded', finish_time: trx.fn.now() });
  });
}
