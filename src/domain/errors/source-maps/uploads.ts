// Source map and minified file uploads (docs/api.md): the file goes to the object store, named by its
// content hash, and its metadata to Postgres. The object is written first, so a row never points at nothing; a
// replaced map's old object is deleted afterwards. A map must parse as ECMA-426 here, so that a
// worker meets a malformed map only when the store hands back something else.
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Config } from '../../../config.ts';
import { AppError } from '../../../app-error.ts';
import type { ObjectStore } from '../../../storage/object-store.ts';
import { filePath } from '../pipeline/paths.ts';
import { parseMap } from './cache.ts';
import { debugIdOf } from './debug-ids.ts';
import { releaseFileQueries, type ReleaseFileTable, type SourceMapRow } from './queries.ts';

/** Source maps are service data, kept apart from backups and from applications' buckets. */
export const sourceMapBucket = (config: Pick<Config, 'CAIRN_STORAGE_BUCKET_PREFIX'>): string =>
  `${config.CAIRN_STORAGE_BUCKET_PREFIX}source-maps`;

const ensured = new WeakSet<ObjectStore>();

/** The source-map bucket, made on first use by each store client. */
export async function ensureSourceMapBucket(deps: Pick<UploadDeps, 'store' | 'config'>): Promise<string> {
  const bucket = sourceMapBucket(deps.config);
  if (!ensured.has(deps.store)) {
    await deps.store.ensureBucket(bucket);
    ensured.add(deps.store);
  }
  return bucket;
}

/**
 * The largest map or minified file one upload takes, whether a PUT body or a file of a sentry-cli
 * bundle: real bundles' maps are megabytes, and a worker parses one 50 MiB map in a 64 MB old space.
 */
export const releaseFileMaxBytes = 50 * 1024 * 1024;

export interface UploadDeps {
  db: Knex;
  store: ObjectStore;
  config: Pick<Config, 'CAIRN_STORAGE_BUCKET_PREFIX'>;
}

/** A map as a PUT body brings it: checked (`checkSourceMapText`), then stored as its JSON text. */
export async function uploadSourceMap(
  deps: UploadDeps,
  envId: string,
  release: string,
  file: string,
  sourceMap: unknown,
): Promise<SourceMapRow> {
  const json = JSON.stringify(sourceMap);
  checkSourceMapText(json);
  return storeCheckedSourceMap(deps, envId, release, file, json, debugIdOf(sourceMap));
}

/**
 * What storing a map requires of it, without storing it: it parses as ECMA-426 version 3. Throws
 * invalid_request; answers the debug id the map declares. A sentry-cli bundle checks each of its
 * maps with this before it stores any, then stores them with `storeCheckedSourceMap`, so a map
 * (up to 50 MiB) is parsed once.
 */
export function checkSourceMapText(json: string): { debugId: string | null } {
  const map = parseMap(json);
  if (map !== 'malformed') return { debugId: map.debugId };
  let notJson = false;
  try {
    JSON.parse(json);
  } catch {
    notJson = true;
  }
  throw new AppError(
    'invalid_request',
    notJson ? 'source_map is not JSON' : 'source_map is not a valid source map (ECMA-426 version 3)',
    { details: { field: 'body.source_map' } },
  );
}

/** A map's JSON text that `checkSourceMapText` has passed, kept as it came. */
export async function storeCheckedSourceMap(
  deps: UploadDeps,
  envId: string,
  release: string,
  file: string,
  json: string,
  debugId: string | null,
): Promise<SourceMapRow> {
  return storeReleaseFile(deps, 'error_source_maps', {
    envId,
    release,
    file,
    text: json,
    contentType: 'application/json',
    debugId,
  });
}

/** A minified file's text (docs/api.md "Minified files"), stored as maps are. */
export async function uploadMinifiedSource(
  deps: UploadDeps,
  envId: string,
  release: string,
  file: string,
  source: string,
): Promise<SourceMapRow> {
  return storeReleaseFile(deps, 'error_minified_sources', {
    envId,
    release,
    file,
    text: source,
    contentType: 'text/javascript; charset=utf-8',
  });
}

const objectDir: Record<ReleaseFileTable, string> = {
  error_source_maps: 'source-maps',
  error_minified_sources: 'minified-sources',
};

/**
 * One file of a release: the object first, under its content hash, then its row; an object no row
 * vouches for is removed, and so is the one a replaced row named.
 */
async function storeReleaseFile(
  deps: UploadDeps,
  table: ReleaseFileTable,
  f: { envId: string; release: string; file: string; text: string; contentType: string; debugId?: string | null },
): Promise<SourceMapRow> {
  const queries = releaseFileQueries(deps.db, table);
  const sha256 = createHash('sha256').update(f.text).digest('hex');
  const fileHash = createHash('sha256').update(`${f.release}\n${f.file}`).digest('hex').slice(0, 32);
  const objectKey = `${objectDir[table]}/${f.envId}/${fileHash}/${sha256}${table === 'error_source_maps' ? '.map' : '.js'}`;
  const bucket = await ensureSourceMapBucket(deps);
  await deps.store.put(bucket, objectKey, f.text, { contentType: f.contentType });
  let upserted;
  try {
    upserted = await queries.upsert({
      env_id: f.envId,
      release: f.release,
      file: f.file,
      file_path: filePath(f.file),
      object_key: objectKey,
      size_bytes: Buffer.byteLength(f.text),
      sha256,
      debug_id: f.debugId ?? null,
    });
  } catch (err) {
    // No row vouches for the object: remove it, unless an earlier upload of the same file does.
    if (!(await queries.referenced(objectKey).catch(() => true)))
      await deps.store.delete(bucket, objectKey).catch(() => undefined);
    throw err;
  }
  if (upserted.replacedKey) await deps.store.delete(bucket, upserted.replacedKey).catch(() => undefined);
  return upserted.row;
}
