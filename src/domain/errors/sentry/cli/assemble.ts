// Assembling an artifact bundle (a worker's job, `errors.assemble-bundle`): its chunks, in order,
// from the store; their SHA-1 must be the bundle's checksum; the zip's manifest names each file's
// URL (`~/path`, as sentry-cli writes it), type and headers. Each source map is stored for the
// minified file that names it (its `sourcemap` header), as a map upload stores it, under the
// bundle's release, with the debug id the file declares; each minified file is stored too. A
// bundle with no release (debug ids only) lands under the release `debug-ids`. Once stored, the
// chunks go. A bundle that cannot be read is marked `error` with a reason the CLI prints.
//
// The worker is shared by every tenant, so a bundle is never inflated whole (a 300 KiB zip can
// declare a 300 MiB file): the zip's directory is held to `bundleLimits` first; every file the
// manifest names is then checked, one at a time, for all that storing it requires (inflated with
// its bytes counted and its CRC checked, a map parsed as a map upload parses it, its URL one a row
// can hold), keeping nothing of it but the verdict and the map's debug id; only when every file
// has passed is each inflated again and stored, with no check left that can fail. A refused
// bundle stores nothing and its `error` names the file. Inflating twice costs less than parsing
// twice (a map is up to 50 MiB) or than staging every file for a publish at the end.
import { AppError } from '../../../../app-error.ts';
import { unstorable } from '../../../../pg-text.ts';
import { parseDebugId } from '../../source-maps/debug-ids.ts';
import {
  checkSourceMapText,
  releaseFileMaxBytes,
  storeCheckedSourceMap,
  uploadMinifiedSource,
  type UploadDeps,
} from '../../source-maps/uploads.ts';
import { releaseFileNameMaxBytes } from '../../../../contract/errors.ts';
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
 * What one bundle may hold (docs/api.md "Artifact bundle limits"). A file: what a map or
 * minified-file upload takes. In all: 1 GiB inflated, ten times the 100 MiB a bundle may be
 * compressed (Sentry caps the compressed bundle alone, at 2 GiB, and extracts it to disk), and at
 * most 20 times the bundle's own size past its first MiB, so that a small bundle costs the worker
 * little (a 1 MiB zip of zeros can declare 1000 MiB under the 1 GiB): the worker inflates at most
 * twice 20 times what was uploaded, and stores at most 20 times it. Real bundles are far inside:
 * sentry-cli's bundles of esbuild builds measured 3.6-5.2 times (the test app with
 * @sentry/browser 5.0, TypeScript's compiler 4.3), unminified ones up to 6.3, no file over 6.5;
 * zip-bomb defences use ratios of 10 (SonarSource's rule S5042) to 100 (Apache POI's
 * ZipSecureFile, per entry). The ratio is on the whole bundle, not per file: the work is the sum,
 * and one honest generated file can deflate far better than the build it belongs to. Files:
 * 10,000 (each is an object and a row; sentry-cli writes one per file of the build). The
 * manifest: 4 MiB, ~20,000 files' entries, since it is parsed whole.
 */
export const bundleLimits = {
  maxEntrySize: releaseFileMaxBytes,
  maxTotalSize: 1024 * 1024 * 1024,
  maxInflateRatio: 20,
  ratioGraceSize: 1024 * 1024,
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
  // The URL names the file's row, so it is held to what a map upload's `file` may be.
  for (const { entry: e, file: f } of files) {
    if (Buffer.byteLength(f.url) > releaseFileNameMaxBytes || unstorable(f.url))
      throw new BundleError(
        `the bundle's file ${entryLabel(e.name)} has a URL of more than ${releaseFileNameMaxBytes} bytes, or with U+0000 or an unpaired surrogate`,
      );
  }
  return files.sort((a, b) => a.entry.localOffset - b.entry.localOffset);
}

type BundleFile = Awaited<ReturnType<typeof bundleFiles>>[number];

/** A check's refusal (an AppError a client caused) as the bundle's error, naming the file. */
function refusal<T>(file: BundleFile, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof AppError && err.status < 500)
      throw new BundleError(`the bundle's file ${entryLabel(file.entry.name)} (${file.file.url}): ${err.message}`);
    throw err;
  }
}

/**
 * Every check storing the files makes, with nothing stored and nothing kept but the debug id of
 * each map (a file's bytes are dropped once checked): inflated whole (counted, CRC), and a map
 * parsed as a map upload parses it.
 */
async function checkFiles(src: RandomAccess, files: BundleFile[]): Promise<Map<BundleFile, string | null>> {
  const debugIds = new Map<BundleFile, string | null>();
  for (const f of files) {
    if (f.file.type !== 'source_map') {
      await verifyEntry(src, f.entry);
      continue;
    }
    const text = (await readEntry(src, f.entry)).toString('utf8');
    // The id the map declares, else the one its manifest entry gives.
    const { debugId } = refusal(f, () => checkSourceMapText(text));
    debugIds.set(f, debugId ?? parseDebugId(header(f.file, 'debug-id')));
  }
  return debugIds;
}

/** Stores the bundle's files once every one has passed every check. Throws BundleError or ZipError for a bundle no retry can fix. */
async function storeBundle(deps: UploadDeps, envId: string, release: string, src: RandomAccess): Promise<void> {
  const dir = await readDirectory(src, bundleLimits);
  const files = await bundleFiles(src, dir);
  const debugIds = await checkFiles(src, files);
  // Each map belongs to the minified file whose `sourcemap` header names it.
  const mapsFor = new Map<string, string>();
  for (const { file: f } of files) {
    const ref = header(f, 'sourcemap');
    if (f.type === 'minified_source' && typeof ref === 'string' && !ref.startsWith('data:'))
      mapsFor.set(resolveRef(f.url, ref), f.url);
  }
  for (const f of files) {
    const { url } = f.file;
    // Inflated again (counted and CRC-checked again): the same bytes that were checked.
    const text = (await readEntry(src, f.entry)).toString('utf8');
    if (f.file.type !== 'source_map') {
      await uploadMinifiedSource(deps, envId, release, url, text);
      continue;
    }
    // The map is kept for its minified file's URL, as a map upload names it, and as it came.
    const file = mapsFor.get(url) ?? url.replace(/\.map$/, '');
    await storeCheckedSourceMap(deps, envId, release, file, text, debugIds.get(f) ?? null);
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
