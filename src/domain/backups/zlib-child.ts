// The zlib child: the compressor, the inspector and the restore's decompressor.
//
// The child-process halves of a backup and a restore are wired fd to fd so that the uncompressed
// SQL never passes through the worker:
//   backup:  pg_dump ──pipe──▶ zlib child (gzip -6, parallel members) ──▶ worker (encrypt, hash, upload)
//   restore: worker (verified gzip bytes) ──▶ zlib child (gunzip) ──pipe──▶ psql
//
// Why a child process: with zlib inside the worker (the first version), every byte of SQL crossed
// the worker's event loop on its way to and from the zlib thread, and its memory churned with it.
// Why a Node child rather than the `gzip` binary: compression is the bottleneck of a backup, and
// Node's bundled zlib (Chromium's, with SIMD) deflates at level 6 in about 20% less CPU than GNU
// gzip 1.12, with slightly smaller output. Measured on 2 cores, 1 GB databases, quiet machine, per
// round against `pg_dump | gzip -6` in the same run: gzip binary 0.90–0.92 (application-like
// data) and 0.92–0.95 (pgbench); zlib inside the worker 0.98–1.03 and 0.89–1.01; this child
// 1.05–1.08 and 1.15–1.37. The child costs about 60 MB of RSS of its own while it runs (a bare
// Node is 40 MB); the `gzip` binary would cost 3 MB. It runs `node -e` with no TypeScript, none
// of our modules and an empty environment (no secrets).
//
// What the children measure. Every SQL byte passes through one of them, so they are where the
// dump is checked without the SQL crossing the worker: the compressor counts and hashes what
// pg_dump wrote; the inspector (a backup read back from the store, or a drill's dump of its
// scratch copy) counts, hashes, checks the closing line and takes per-table figures; the restore
// decompressor checks the same before it lets psql see COMMIT (dump-check.ts). Each writes one
// JSON report on fd 3 as it ends.
//
// Every pipe we read from a child is taken into a stream of ours the moment it starts (children.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { dumpCheckSource, type TableFigures } from './format/dump-check.ts';
import { restoreStages } from './restore/replay-stages.ts';

/** What pg_dump wrote, as the compressor counted it. */
export interface SqlFigures {
  bytes: number;
  sha256: string;
}

/** What an inspector found in a whole script. */
export interface InspectReport extends SqlFigures {
  /** Why the script is not whole, or null. */
  incomplete: string | null;
  tables: Record<string, TableFigures>;
}

export type Mode = 'gzip' | 'inspect' | 'restore';

export interface ChildOptions {
  /** inspect: the input is gzip (a stored backup) rather than plain SQL (a drill's dump). */
  gzipped?: boolean;
  /** restore: written before the dump (BEGIN and the wipe). */
  preamble?: string;
  /** restore: what the backup's record says pg_dump wrote; absent for backups taken before it was recorded. */
  expected?: SqlFigures | null;
  /** restore: the target's roles follow on fd 5 (role-filter.ts). */
  roles?: boolean;
}

/**
 * Compression on every core (the child's source text): the SQL is cut into blocks of
 * `gzipBlockBytes`, each deflated at level 6 on libuv's thread pool (zlib.gzip) as its own gzip
 * member, `gzipBlocksInFlight` at once, and written in order. A series of members is one gzip file
 * (RFC 1952 2.2), which `gunzip`, zlib's and Node's Gunzip read whole, so the format stays
 * `.sql.gz`. One deflate stream is one core's work, and it was the backup's bottleneck: pg_dump and
 * its server backend use less than the second core. Each member starts with an empty dictionary:
 * 1 MiB blocks cost well under 1% of size against one stream.
 */
export const gzipBlockBytes = 1024 * 1024;
const gzipBlocksInFlight = 4;
const gcEveryMembers = 8;
const parallelGzipSource = `
function parallelGzip() {
  let held = [];
  let heldBytes = 0;
  let members = 0;
  const inFlight = [];
  const deflate = (block) => new Promise((resolve, reject) =>
    zlib.gzip(block, { level: 6, chunkSize: 131072 }, (err, out) => (err ? reject(err) : resolve(out))));
  const cut = () => {
    const out = deflate(Buffer.concat(held, heldBytes));
    // Awaited in order; one failing behind the head would otherwise end the child unreported.
    out.catch(() => undefined);
    inFlight.push(out);
    members += 1;
    held = [];
    heldBytes = 0;
    // Each zlib.gzip call makes a zlib handle (its deflate state outside the heap) that only a
    // full GC frees: without one every ${gcEveryMembers} blocks they piled up to some 60 MB.
    if (members % ${gcEveryMembers} === 0) gc();
  };
  return new Transform({
    transform(chunk, _enc, done) {
      held.push(chunk);
      heldBytes += chunk.length;
      if (heldBytes >= ${gzipBlockBytes}) cut();
      if (inFlight.length < ${gzipBlocksInFlight}) return done();
      inFlight.shift().then((out) => { this.push(out); done(); }, done);
    },
    flush(done) {
      // An empty dump still gives one (empty) member: a gzip file is at least one.
      if (heldBytes > 0 || members === 0) cut();
      Promise.all(inFlight.splice(0)).then((outs) => { for (const out of outs) this.push(out); done(); }, done);
    },
  });
}`;

/**
 * The zlib child's program (CommonJS for `node -e`; its options arrive as JSON in argv). Dead
 * chunk buffers are freed by a minor GC every 4 MiB on the uncompressed side: V8 would let some
 * 60 MB of them pile up first.
 */
export function zlibProgram(mode: Mode): string {
  return `
const zlib = require('node:zlib');
const { createHash } = require('node:crypto');
const { writeSync } = require('node:fs');
const { pipeline, Transform, Writable } = require('node:stream');
const options = JSON.parse(process.argv[1] || '{}');
${dumpCheckSource}
const hash = createHash('sha256');
const stats = ${mode === 'inspect' ? 'copyStatsScanner()' : 'null'};
let bytes = 0;
let tail = Buffer.alloc(0);
let since = 0;
const tally = new Transform({ transform(chunk, _enc, done) {
  bytes += chunk.length;
  hash.update(chunk);
  tail = chunk.length >= 4096 ? chunk.subarray(chunk.length - 4096) : Buffer.concat([tail, chunk]).subarray(-4096);
  if (stats) stats.push(chunk);
  since += chunk.length;
  if (since > 4194304) { since = 0; gc({ type: 'minor' }); }
  done(null, chunk);
} });
const figures = () => ({ bytes, sha256: hash.digest('hex') });
const report = (r) => writeSync(3, JSON.stringify(r) + '\\n');
const fail = (err) => { process.stderr.write(String(err && err.message)); process.exit(1); };
${mode === 'restore' ? restoreStages : ''}
${
  {
    gzip: `${parallelGzipSource}
pipeline(process.stdin, tally, parallelGzip(), process.stdout, (err) => {
  if (err) fail(err);
  report(figures());
});`,
    inspect: `const discard = new Writable({ write(_c, _e, done) { done(); } });
const stages = options.gzipped ? [zlib.createGunzip({ chunkSize: 131072 }), tally, discard] : [tally, discard];
pipeline(process.stdin, ...stages, (err) => {
  if (err) fail(err);
  report({ ...figures(), incomplete: dumpIncompleteReason(tail.toString('latin1')), tables: stats.end() });
});`,
    restore: `pipeline(process.stdin, zlib.createGunzip({ chunkSize: 131072 }), tally, blobs, roles, gate, process.stdout, (err) => {
  // zlib's own errors (Z_BUF_ERROR, Z_DATA_ERROR) mean the backup is not whole gzip: refused too.
  if (err && !refused && String(err.code).startsWith('Z_')) {
    refused = 'the backup does not decompress (' + err.message + '): it was cut short, or it is empty';
    report({ bytes, sha256: null, refused });
  }
  if (err && !refused) fail(err);
  process.exit(refused ? 1 : 0);
});`,
  }[mode]
}`;
}

export function spawnZlib(
  mode: Mode,
  stdin: 'pipe' | Readable,
  options: ChildOptions = {},
): { child: ChildProcess; report: Promise<unknown> } {
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--max-semi-space-size=1', '-e', zlibProgram(mode), JSON.stringify(options)],
    {
      stdio: [stdin, 'pipe', 'pipe', 'pipe', ...(mode === 'restore' ? (['pipe', 'pipe'] as const) : [])],
      env: {},
    },
  );
  // The report pipe is read from the start too (see the top of this file). The report is its
  // first line: the restore child sends it before it waits for the worker's word.
  let text = '';
  const pipe = child.stdio[3] as Readable;
  const report = new Promise<unknown>((resolve) => {
    const line = () => {
      const nl = text.indexOf('\n');
      if (nl < 0) return false;
      try {
        resolve(JSON.parse(text.slice(0, nl)));
      } catch {
        resolve(undefined);
      }
      return true;
    };
    pipe.on('data', (d: Buffer) => {
      text += d.toString('utf8');
      line();
    });
    pipe.once('close', () => {
      if (!line()) resolve(undefined);
    });
  });
  return { child, report };
}
