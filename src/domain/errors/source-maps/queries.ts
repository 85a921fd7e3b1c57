// Metadata of a release's files (docs/api.md "Source maps", "Minified files"): one row per
// (environment, release, file) in `error_source_maps` or `error_minified_sources`; the file itself
// is an object in the object store, named by its content hash.
import type { Db } from '../../../db.ts';
import { newId } from '../../../ids.ts';
import type { MapRef } from '../pipeline/symbolicate.ts';

export interface SourceMapRow extends MapRef {
  id: string;
  env_id: string;
  release: string;
  create_time: Date;
  /** The debug id the file declares (`debugId` in a map), lower-case; null when it declares none. */
  debug_id: string | null;
}

const columns = [
  'id',
  'env_id',
  'release',
  'file',
  'file_path',
  'object_key',
  'size_bytes',
  'sha256',
  'create_time',
  'debug_id',
] as const;

const toRow = (r: SourceMapRow): SourceMapRow => ({ ...r, size_bytes: Number(r.size_bytes) });

/** The tables of a release's files: its source maps, and its minified files. */
export type ReleaseFileTable = 'error_source_maps' | 'error_minified_sources';

const idPrefix: Record<ReleaseFileTable, string> = { error_source_maps: 'smap', error_minified_sources: 'msrc' };

export const sourceMapQueries = (db: Db) => releaseFileQueries(db, 'error_source_maps');
export const minifiedSourceQueries = (db: Db) => releaseFileQueries(db, 'error_minified_sources');

export function releaseFileQueries(db: Db, table: ReleaseFileTable) {
  return {
    /** Inserts or replaces the map of a file; answers the row and the object key it replaced. */
    async upsert(row: Omit<SourceMapRow, 'id' | 'create_time'>): Promise<{ row: SourceMapRow; replacedKey?: string }> {
      const before = await db(table)
        .where({ env_id: row.env_id, release: row.release, file: row.file })
        .first('object_key');
      const { rows } = await db.raw<{ rows: SourceMapRow[] }>(
        `insert into ${table} (id, env_id, release, file, file_path, object_key, size_bytes, sha256, debug_id)
         values (?, ?, ?, ?, ?, ?, ?, ?, ?)
         on conflict (env_id, release, file) do update set file_path = excluded.file_path, object_key = excluded.object_key,
           size_bytes = excluded.size_bytes, sha256 = excluded.sha256, debug_id = excluded.debug_id, create_time = now()
         returning ${columns.join(', ')}`,
        [
          newId(idPrefix[table]),
          row.env_id,
          row.release,
          row.file,
          row.file_path,
          row.object_key,
          row.size_bytes,
          row.sha256,
          row.debug_id,
        ],
      );
      const replaced =
        before?.object_key && before.object_key !== row.object_key ? (before.object_key as string) : undefined;
      return { row: toRow(rows[0]!), ...(replaced ? { replacedKey: replaced } : {}) };
    },

    /** Whether any row still names this stored object. */
    async referenced(objectKey: string): Promise<boolean> {
      return Boolean(await db(table).where({ object_key: objectKey }).first('id'));
    },

    async list(envId: string, release: string, after: string | undefined, limit: number): Promise<SourceMapRow[]> {
      const q = db(table).where({ env_id: envId, release }).orderBy('id', 'asc').limit(limit).select(columns);
      if (after) q.where('id', '>', after);
      return (await q).map(toRow);
    },

    /**
     * The files declaring these debug ids in the environment, whatever their release: the newest
     * upload of each id wins (the same build uploaded under two releases is the same file).
     */
    async forDebugIds(envId: string, debugIds: string[]): Promise<Map<string, SourceMapRow>> {
      const { rows } = await db.raw<{ rows: SourceMapRow[] }>(
        `select distinct on (debug_id) ${columns.join(', ')}
           from ${table} where env_id = ? and debug_id = any(?::uuid[])
          order by debug_id, create_time desc, id desc`,
        [envId, debugIds],
      );
      return new Map(rows.map((r) => [r.debug_id!, toRow(r)]));
    },

    /** The maps of several (environment, release) pairs, keyed `env_id\nrelease`. */
    async forReleases(pairs: { env_id: string; release: string }[]): Promise<Map<string, SourceMapRow[]>> {
      const out = new Map<string, SourceMapRow[]>();
      if (pairs.length === 0) return out;
      const { rows } = await db.raw<{ rows: SourceMapRow[] }>(
        `select ${columns.map((c) => `m.${c}`).join(', ')} from ${table} m
         join jsonb_to_recordset(?::jsonb) as p(env_id text, release text) on p.env_id = m.env_id and p.release = m.release`,
        [JSON.stringify(pairs)],
      );
      for (const r of rows) {
        const k = `${r.env_id}\n${r.release}`;
        out.set(k, [...(out.get(k) ?? []), toRow(r)]);
      }
      return out;
    },
  };
}
