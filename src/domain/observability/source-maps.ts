// Source map uploads (CONTRACT.md): the map goes to the object store, named by its content hash,
// and its metadata to Postgres. The object is written first, so a row never points at nothing; a
// replaced map's old object is deleted afterwards. A map must parse as ECMA-426 here, so that a
// worker meets a malformed map only when the store hands back something else.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../../config.ts';
import { AppError } from '../../errors.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import { filePath } from './paths.ts';
import { parseMap } from './source-map-cache.ts';
import { sourceMapQueries, type SourceMapRow } from './source-map-queries.ts';

/** Source maps are service data, kept apart from backups and from applications' buckets. */
export const sourceMapBucket = (config: Pick<Config, 'CAIRN_STORAGE_BUCKET_PREFIX'>): string => `${config.CAIRN_STORAGE_BUCKET_PREFIX}source-maps`;

const ensured = new WeakSet<ObjectStore>();

export interface UploadDeps {
  db: Knex;
  store: ObjectStore;
  config: Pick<Config, 'CAIRN_STORAGE_BUCKET_PREFIX'>;
}

export async function uploadSourceMap(deps: UploadDeps, envId: string, release: string, file: string, sourceMap: unknown): Promise<SourceMapRow> {
  const json = JSON.stringify(sourceMap);
  if (parseMap(json) === 'malformed') {
    throw new AppError('invalid_request', 'source_map is not a valid source map (ECMA-426 version 3)', { details: { field: 'body.source_map' } });
  }
  const sha256 = createHash('sha256').update(json).digest('hex');
  const fileHash = createHash('sha256').update(`${release}\n${file}`).digest('hex').slice(0, 32);
  const objectKey = `source-maps/${envId}/${fileHash}/${sha256}.map`;
  const bucket = sourceMapBucket(deps.config);
  if (!ensured.has(deps.store)) {
    await deps.store.ensureBucket(bucket);
    ensured.add(deps.store);
  }
  await deps.store.put(bucket, objectKey, json, { contentType: 'application/json' });
  let upserted;
  try {
    upserted = await sourceMapQueries(deps.db).upsert({
      env_id: envId, release, file, file_path: filePath(file), object_key: objectKey, size_bytes: Buffer.byteLength(json), sha256,
    });
  } catch (err) {
    // No row vouches for the object: remove it, unless an earlier upload of the same map does.
    if (!(await sourceMapQueries(deps.db).referenced(objectKey).catch(() => true))) await deps.store.delete(bucket, objectKey).catch(() => undefined);
    throw err;
  }
  if (upserted.replacedKey) await deps.store.delete(bucket, upserted.replacedKey).catch(() => undefined);
  return upserted.row;
}
