// The local breached-password store: sorted SHA-1 suffix ranges keyed by their 20-bit prefix, and
// the staged imports that feed them (breached-import.ts).
import type { Db } from '../../../db.ts';

export function breachedQueries(db: Db) {
  return {
    /** The packed suffixes of one prefix's range, if any. */
    async range(prefix: number): Promise<Buffer | undefined> {
      const row = (await db('breached_ranges').where({ prefix }).first('suffixes')) as { suffixes: Buffer } | undefined;
      return row?.suffixes;
    },

    /** The ranges of these prefixes, locked until the caller's transaction ends. */
    async lockRanges(prefixes: number[]): Promise<Map<number, Buffer>> {
      const rows = (await db('breached_ranges')
        .whereIn('prefix', prefixes)
        .forUpdate()
        .select('prefix', 'suffixes')) as {
        prefix: number;
        suffixes: Buffer;
      }[];
      return new Map(rows.map((r) => [r.prefix, r.suffixes]));
    },

    async saveRanges(rows: { prefix: number; suffixes: Buffer }[]): Promise<void> {
      await db('breached_ranges').insert(rows).onConflict('prefix').merge(['suffixes']);
    },

    async createImport(id: string, format: string): Promise<void> {
      await db('breached_imports').insert({ id, state: 'pending', format });
    },

    async addChunk(importId: string, seq: number, data: Buffer): Promise<void> {
      await db('breached_import_chunks').insert({ import_id: importId, seq, data });
    },

    async setEntries(importId: string, entries: number): Promise<void> {
      await db('breached_imports').where({ id: importId }).update({ entries });
    },

    async importState(importId: string): Promise<string | undefined> {
      const row = (await db('breached_imports').where({ id: importId }).first('state')) as
        { state: string } | undefined;
      return row?.state;
    },

    async markRunning(importId: string): Promise<void> {
      await db('breached_imports').where({ id: importId }).update({ state: 'running' });
    },

    /** The staged chunk after `seq`, in order. */
    async nextChunk(importId: string, seq: number): Promise<{ seq: number; data: Buffer } | undefined> {
      return (await db('breached_import_chunks')
        .where({ import_id: importId })
        .where('seq', '>', seq)
        .orderBy('seq')
        .first('seq', 'data')) as { seq: number; data: Buffer } | undefined;
    },

    /** The staged chunks go and the import is done (in the caller's transaction). */
    async finishImport(importId: string): Promise<void> {
      await db('breached_import_chunks').where({ import_id: importId }).delete();
      await db('breached_imports').where({ id: importId }).update({ state: 'succeeded', finish_time: db.fn.now() });
    },
  };
}
