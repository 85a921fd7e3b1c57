// Proving a backup before it is called `succeeded`, as pgBackRest's `verify` does: the stored
// object is read back from the bucket, its length and sha256 are the ones uploaded, every segment
// decrypts and authenticates (format.ts), it gunzips, and the SQL inside is exactly what pg_dump
// wrote (byte count and sha256, taken by the compressor on the way in) and ends with pg_dump's
// closing line (dump-check.ts). Streamed: the object is never held whole, and the SQL is read by
// the inspector child, never by the worker (inspect.ts, zlib-child.ts).
//
// Why read back rather than trust the upload: the first backup of a fresh worker once came out
// empty yet complete in S3's eyes (children.ts, "Reading a child's output"); a store, proxy or
// disk that loses or changes bytes is caught the same way. Cost: one GET of the object and one
// gunzip, measured in `npm run bench -- backups`.
import { createHash } from 'node:crypto';
import { pipeline } from 'node:stream/promises';
import type { BackupDeps } from '../deps.ts';
import { BackupIntegrityError, decryptStream } from '../format/format.ts';
import { streamingCollector } from '../memory.ts';
import { startInspect } from './inspect.ts';
import { type InspectReport, type SqlFigures } from '../zlib-child.ts';
import type { BackupRow } from '../queries.ts';

/** Passes bytes through while counting and hashing them. */
export async function* measure(
  source: AsyncIterable<Buffer>,
  into: { bytes: number; hash?: ReturnType<typeof createHash> },
): AsyncGenerator<Buffer> {
  const collect = streamingCollector(4 * 1024 * 1024);
  for await (const chunk of source) {
    into.bytes += chunk.length;
    into.hash?.update(chunk);
    collect(chunk.length);
    yield chunk;
  }
}

export interface Uploaded {
  objectBytes: number;
  objectSha256: string;
  sql: SqlFigures;
}

const n = (x: number): string => x.toLocaleString('en-US');

/** Compares what was read back with what was written; the reason a person can act on, or null. */
export function verificationProblem(
  uploaded: Uploaded,
  read: { bytes: number; sha256: string },
  report: InspectReport,
): string | null {
  if (read.bytes !== uploaded.objectBytes || read.sha256 !== uploaded.objectSha256) {
    return `the object read back (${n(read.bytes)} bytes) is not the one uploaded (${n(uploaded.objectBytes)} bytes): the object store lost or changed it`;
  }
  if (report.bytes !== uploaded.sql.bytes) {
    return `the object holds ${n(report.bytes)} bytes of SQL where pg_dump wrote ${n(uploaded.sql.bytes)}: the dump was lost on its way to the store`;
  }
  if (report.sha256 !== uploaded.sql.sha256)
    return 'the SQL in the object differs from what pg_dump wrote (sha256): the dump was changed on its way to the store';
  if (report.incomplete) return `${report.incomplete}; pg_dump stopped early`;
  return null;
}

/** Reads the stored object back; resolves with its figures, or throws BackupIntegrityError with the reason. */
export async function verifyStored(
  deps: Pick<BackupDeps, 'store'>,
  backup: BackupRow,
  dataKey: Buffer,
  uploaded: Uploaded,
): Promise<InspectReport> {
  const got = await deps.store.get(backup.bucket, backup.object_key);
  if (!got) throw new BackupIntegrityError('the object is missing from the bucket right after its upload');
  const inspect = startInspect({ gzipped: true });
  const read = { bytes: 0, hash: createHash('sha256') };
  try {
    await pipeline(decryptStream(measure(got.body, read), dataKey), inspect.input);
  } catch (err) {
    got.body.destroy();
    if (err instanceof BackupIntegrityError) {
      inspect.kill();
      throw err;
    }
    // A gunzip error kills the inspector, which breaks our pipe: its message is the cause. Any
    // other error closed the inspector's input, so it ends by itself.
    const own = await inspect.finished.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (own)
      throw new BackupIntegrityError(`the object does not gunzip: ${own instanceof Error ? own.message : String(own)}`);
    throw new BackupIntegrityError(
      `the object could not be read back: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  let report: InspectReport;
  try {
    report = await inspect.finished;
  } catch (err) {
    throw new BackupIntegrityError(`the object does not gunzip: ${err instanceof Error ? err.message : String(err)}`);
  }
  const problem = verificationProblem(uploaded, { bytes: read.bytes, sha256: read.hash.digest('hex') }, report);
  if (problem) throw new BackupIntegrityError(problem);
  return report;
}
