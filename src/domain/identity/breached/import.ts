// Loading the local breached-password store: `cairn admin breached import FILE` turns
// each line into a full SHA-1 digest on the operator's machine (a plain password list never
// reaches the database in clear), streams the digests in chunks, and enqueues one job; the worker
// merges them into the sorted ranges. Merging is a union, so a retried job changes nothing.
import type { Knex } from 'knex';
import type { Readable } from 'node:stream';
import { createInterface } from 'node:readline';
import { newId } from '../../../ids.ts';
import type { IdentityJobs as Jobs } from '../queues.ts';
import { breachedQueries } from './queries.ts';
import { packSuffixes, parseImportLine, splitHash, unpackSuffixes, type ImportFormat } from './format.ts';

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
  const q = breachedQueries(db);
  await q.createImport(id, format);
  let seq = 0;
  let entries = 0;
  let batch: string[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await q.addChunk(id, seq++, Buffer.from(batch.join(''), 'hex'));
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
    await breachedQueries(trx).setEntries(id, entries);
    await jobs.enqueue(trx, 'identity.breached-import', { import_id: id });
  });
  return { id, entries };
}

async function mergeRanges(db: Knex, ranges: Map<number, Buffer[]>): Promise<void> {
  const prefixes = [...ranges.keys()].sort((a, b) => a - b);
  for (let i = 0; i < prefixes.length; i += 1000) {
    const slice = prefixes.slice(i, i + 1000);
    await db.transaction(async (trx) => {
      const q = breachedQueries(trx);
      const old = await q.lockRanges(slice);
      const rows = slice.map((prefix) => ({
        prefix,
        suffixes: packSuffixes([...unpackSuffixes(old.get(prefix) ?? Buffer.alloc(0)), ...ranges.get(prefix)!]),
      }));
      await q.saveRanges(rows);
    });
  }
}

/** Worker side: merges the staged digests, then drops them. */
export async function mergeImport(db: Knex, importId: string): Promise<void> {
  const q = breachedQueries(db);
  const state = await q.importState(importId);
  if (!state || state === 'succeeded') return;
  await q.markRunning(importId);
  let ranges = new Map<number, Buffer[]>();
  let pending = 0;
  let seq = -1;
  for (;;) {
    const chunk = await q.nextChunk(importId, seq);
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
  await db.transaction((trx) => breachedQueries(trx).finishImport(importId));
}
