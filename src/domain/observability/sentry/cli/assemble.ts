// Assembling an artifact bundle (a worker's job, `errors.assemble-bundle`): its chunks, in order,
// from the store; their SHA-1 must be the bundle's checksum; the zip's manifest names each file's
// URL (`~/path`, as sentry-cli writes it), type and headers. Each source map is stored for the
// minified file that names it (its `sourcemap` header), as a map upload stores it, under the
// bundle's release, with the debug id the file declares; each minified file is stored too. A
// bundle with no release (debug ids only) lands under the release `debug-ids`. Once stored, the
// chunks go. A bundle that cannot be read is marked `error` with a reason the CLI prints.
//
// The worker is shared by every tenant, so a bundle is never inflated whole (a 300 KiB zip can
// declare a 300 MiB file): the zip's directory is held to `bundleLimits` first, every file the
// manifest names is then inflated once with its bytes counted and its CRC checked, and only a
// bundle whose files all check out stores anything, one file at a time. A refused bundle stores
// nothing and its `error` names the file.
import { AppError } from '../../../../errors.ts';
import { debugIdOf, parseDebugId } from '../../source-maps/debug-ids.ts';
import {
  releaseFileMaxBytes,
  uploadMinifiedSource,
  uploadSourceMapText,
  type UploadDeps,
} from '../../source-maps/uploads.ts';
import { sentryLabel } from '../event.ts';
import { BundleError, openBundle } from './bundle-source.ts';
import { discardChunks } from './chunks.ts';
import { bundleQueries } from './queries.ts';
import {
  entryLabel,
  readDirectory,
  readEntry,
  verifyEntry,
  ZipError,
  type RandomAccess,
  type ZipEntry,
} from './zip.ts';

/**
 * What one bundle may hold (docs/api.md "Artifact bundle limits"). A file: what a map or minified-file upload
 * takes. In all: 1 GiB inflated, ten times the 100 MiB a bundle may be compressed (source text and
 * maps deflate 3-6 times, so an honest bundle stays well inside; Sentry caps the compressed bundle
 * alone, at 2 GiB, and extracts it to disk). Files: 10,000 (each is an object and a row; sentry-cli
 * writes one per file of the build). The manifest: 4 MiB, ~20,000 files' entries, since it is
 * parsed whole.
 */
export const bundleLimits = {
  maxEntrySize: releaseFileMaxBytes,
  maxTotalSize: 1024 * 1024 * 1024,
  maxEntries: 10_000,
  maxManifestSize: 4 * 1024 * 1024,
} as const;

/** The release a bundle without one is stored under (debug ids find its maps whatever the release). */
export const debugIdRelease = 'debug-ids';

interface ManifestFile {
  url?: unknown;
  type?: unknown;
  headers?: Record<string, unknown>;
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

/** The files the manifest names as maps or minified files, with their directory entries, in archive order. */
async function bundleFiles(
  src: RandomAccess,
  dir: Map<string, ZipEntry>,
): Promise<{ entry: ZipEntry; file: ManifestFile & { url: string } }[]> {
  const entry = dir.get('manifest.json');
  if (!entry) throw new BundleError('the bundle has no manifest.json');
  if (entry.size > bundleLimits.maxManifestSize)
    throw new BundleError(`the bundle's manifest.json is larger than ${bundleLimits.maxManifestSize} bytes`);
  let manifest: { files?: Record<string, ManifestFile> };
  try {
    manifest = JSON.parse((await readEntry(src, entry)).toString('utf8')) as typeof manifest;
  } catch (err) {
    if (err instanceof ZipError) throw err;
    throw new BundleError("the bundle's manifest.json is not JSON");
  }
  const files = Object.entries(manifest?.files ?? {}).flatMap(([path, f]) => {
    const e = dir.get(path);
    const stored = f?.type === 'source_map' || f?.type === 'minified_source';
    return e && stored && typeof f.url === 'string' && f.url !== ''
      ? [{ entry: e, file: f as ManifestFile & { url: string } }]
      : [];
  });
  return files.sort((a, b) => a.entry.localOffset - b.entry.localOffset);
}

/** Stores the bundle's files once every one has inflated whole. Throws BundleError or ZipError for a bundle no retry can fix. */
async function storeBundle(deps: UploadDeps, envId: string, release: string, src: RandomAccess): Promise<void> {
  const dir = await readDirectory(src, bundleLimits);
  const files = await bundleFiles(src, dir);
  // Each file checked (counted, CRC) before any is stored: a lying header is found with nothing written.
  for (const { entry } of files) await verifyEntry(src, entry);
  // Each map belongs to the minified file whose `sourcemap` header names it.
  const mapsFor = new Map<string, string>();
  for (const { file: f } of files) {
    const ref = header(f, 'sourcemap');
    if (f.type === 'minified_source' && typeof ref === 'string' && !ref.startsWith('data:'))
      mapsFor.set(resolveRef(f.url, ref), f.url);
  }
  for (const { entry, file: f } of files) {
    const url = f.url;
    const text = (await readEntry(src, entry)).toString('utf8');
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
      } else {
        await uploadMinifiedSource(deps, envId, release, url, text);
      }
    } catch (err) {
      if (err instanceof AppError && err.status < 500)
        throw new BundleError(`${entryLabel(entry.name)} (${url}): ${err.message}`);
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
    const bundle = await openBundle(deps, envId, row.chunks);
    if (bundle.sha1 !== checksum)
      throw new BundleError(`the chunks hash to ${bundle.sha1}, not to the bundle's checksum ${checksum}`);
    const release = (row.release && sentryLabel(row.release)) || debugIdRelease;
    await storeBundle(deps, envId, release, bundle);
  } catch (err) {
    if (!(err instanceof BundleError || err instanceof ZipError)) throw err;
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
