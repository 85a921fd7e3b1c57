// Assembling an artifact bundle (a worker's job, `errors.assemble-bundle`): its chunks, in order,
// from the store; their SHA-1 must be the bundle's checksum; the zip's manifest names each file's
// URL (`~/path`, as sentry-cli writes it), type and headers. Each source map is stored for the
// minified file that names it (its `sourcemap` header), as a map upload stores it, under the
// bundle's release, with the debug id the file declares; each minified file is stored too. A
// bundle with no release (debug ids only) lands under the release `debug-ids`. Once stored, the
// chunks go. A bundle that cannot be read is marked `error` with a reason the CLI prints.
import { createHash } from 'node:crypto';
import { unzipSync } from 'fflate';
import { AppError } from '../../../../errors.ts';
import { debugIdOf, parseDebugId } from '../../source-maps/debug-ids.ts';
import {
  ensureSourceMapBucket,
  uploadMinifiedSource,
  uploadSourceMapText,
  type UploadDeps,
} from '../../source-maps/uploads.ts';
import { sentryLabel } from '../event.ts';
import { chunkKey, chunkLimits, discardChunks } from './chunks.ts';
import { readAll } from '../../../../storage/object-store.ts';
import { bundleQueries } from './queries.ts';

/** The release a bundle without one is stored under (debug ids find its maps whatever the release). */
export const debugIdRelease = 'debug-ids';

interface ManifestFile {
  url?: unknown;
  type?: unknown;
  headers?: Record<string, unknown>;
}

class BundleError extends Error {}

/** The bundle's chunks, in order, read and hashed as they come (each at most a chunk's size). */
async function readBundle(deps: UploadDeps, envId: string, chunks: string[]): Promise<{ zip: Buffer; sha1: string }> {
  const bucket = await ensureSourceMapBucket(deps);
  const hash = createHash('sha1');
  const parts: Buffer[] = [];
  let size = 0;
  for (const sha1 of chunks) {
    const got = await deps.store.get(bucket, chunkKey(envId, sha1));
    if (!got) throw new BundleError(`chunk ${sha1} is gone; upload the bundle again`);
    const part = await readAll(got.body);
    size += part.length;
    if (size > chunkLimits.maxFileSize)
      throw new BundleError(`the bundle is larger than ${chunkLimits.maxFileSize} bytes`);
    hash.update(part);
    parts.push(part);
  }
  return { zip: Buffer.concat(parts, size), sha1: hash.digest('hex') };
}

/** A `sourcemap` reference resolved against its file's URL, `~/` URLs included. */
function resolveRef(base: string, ref: string): string {
  try {
    if (base.startsWith('~/')) return `~${new URL(ref, `http://bundle.invalid${base.slice(1)}`).pathname}`;
    return new URL(ref, base).href;
  } catch {
    return ref;
  }
}

const header = (f: ManifestFile, name: string): unknown =>
  Object.entries(f.headers ?? {}).find(([k]) => k.toLowerCase() === name)?.[1];

/** Stores the bundle's files. Throws BundleError for a bundle no retry can fix. */
async function storeBundle(deps: UploadDeps, envId: string, release: string, zip: Buffer): Promise<void> {
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(zip);
  } catch (err) {
    throw new BundleError(`the bundle is not a zip file: ${(err as Error).message}`);
  }
  let manifest: { files?: Record<string, ManifestFile> };
  try {
    manifest = JSON.parse(Buffer.from(files['manifest.json'] ?? []).toString('utf8')) as typeof manifest;
  } catch {
    throw new BundleError('the bundle has no manifest.json');
  }
  const entries = Object.entries(manifest.files ?? {}).filter(
    ([path, f]) => typeof f.url === 'string' && f.url !== '' && files[path] !== undefined,
  );
  // Each map belongs to the minified file whose `sourcemap` header names it.
  const mapsFor = new Map<string, string>();
  for (const [, f] of entries) {
    const ref = header(f, 'sourcemap');
    if (f.type === 'minified_source' && typeof ref === 'string' && !ref.startsWith('data:'))
      mapsFor.set(resolveRef(f.url as string, ref), f.url as string);
  }
  for (const [path, f] of entries) {
    const url = f.url as string;
    const text = Buffer.from(files[path]!).toString('utf8');
    try {
      if (f.type === 'source_map') {
        let map: unknown;
        try {
          map = JSON.parse(text);
        } catch {
          throw new BundleError(`${url} is not JSON`);
        }
        // The id the map declares, else the one its manifest entry gives; the text is kept as it came.
        const debugId = debugIdOf(map) ?? parseDebugId(header(f, 'debug-id'));
        // The map is kept for its minified file's URL, as a map upload names it.
        const file = mapsFor.get(url) ?? url.replace(/\.map$/, '');
        await uploadSourceMapText(deps, envId, release, file, text, debugId);
      } else if (f.type === 'minified_source') {
        await uploadMinifiedSource(deps, envId, release, url, text);
      }
    } catch (err) {
      if (err instanceof AppError && err.status < 500) throw new BundleError(`${url}: ${err.message}`);
      throw err;
    }
  }
}

/** The job: assembles one bundle of an environment, once; a retry after success does nothing. */
export async function assembleBundle(deps: UploadDeps, envId: string, checksum: string): Promise<void> {
  const q = bundleQueries(deps.db);
  const row = await q.assembly(envId, checksum);
  if (!row || row.state !== 'created') return;
  try {
    const { zip, sha1 } = await readBundle(deps, envId, row.chunks);
    if (sha1 !== checksum)
      throw new BundleError(`the chunks hash to ${sha1}, not to the bundle's checksum ${checksum}`);
    const release = (row.release && sentryLabel(row.release)) || debugIdRelease;
    await storeBundle(deps, envId, release, zip);
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    await q.finishAssembly(envId, checksum, 'error', err.message);
    return;
  }
  await q.finishAssembly(envId, checksum, 'ok', null);
  // The chunks are spent (a chunk another bundle shares is uploaded again).
  await discardChunks(
    deps,
    [...new Set(row.chunks)].map((sha1) => ({ env_id: envId, sha1 })),
  );
}
