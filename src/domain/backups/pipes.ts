// The child-process halves of a backup and a restore, wired fd to fd so that the uncompressed SQL
// never passes through the worker:
//   backup:  pg_dump ──pipe──▶ zlib child (gzip -6) ──▶ worker (encrypt, hash, upload)
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
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { blobsTransactionFilter } from './blobs-filter.ts';
import { libpqInvocation } from './pgtools.ts';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** The child's exit, listened for at once so that an early exit is never missed. */
export function exitOf(child: ChildProcess): Promise<Exit> {
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
}

/** The last few KB of a child's stderr, for the error message. */
export function stderrTail(child: ChildProcess): () => string {
  let text = '';
  child.stderr?.on('data', (d: Buffer) => {
    text = (text + d.toString('utf8')).slice(-4000);
  });
  return () => text.trim();
}

const describe = (e: Exit): string => e.signal ?? `exit ${e.code}`;

/**
 * The zlib child's program (CommonJS for `node -e`). Dead chunk buffers are freed by a minor GC
 * every 4 MiB on the uncompressed side: V8 would let some 60 MB of them pile up first.
 */
export function zlibProgram(mode: 'gzip' | 'gunzip'): string {
  return `
const zlib = require('node:zlib');
const { pipeline, Transform } = require('node:stream');
let since = 0;
const collect = new Transform({ transform(chunk, _enc, done) {
  since += chunk.length;
  if (since > 4194304) { since = 0; gc({ type: 'minor' }); }
  done(null, chunk);
} });
${mode === 'gunzip' ? blobsStage : ''}
const stages = ${mode === 'gzip' ? "[collect, zlib.createGzip({ level: 6, chunkSize: 131072 })]" : '[zlib.createGunzip({ chunkSize: 131072 }), collect, blobs]'};
pipeline(process.stdin, ...stages, process.stdout, (err) => {
  if (err) { process.stderr.write(String(err.message)); process.exit(1); }
});`;
}

/**
 * On the way into psql, pg_dump's own BEGIN/COMMIT around large objects are left out
 * (blobs-filter.ts, inlined as source text: the child loads none of our modules). The filter
 * does not throw; should it ever, this child exits 1 and the restore fails.
 */
const blobsStage = `
const blobsFilter = (${blobsTransactionFilter.toString()})();
const blobs = new Transform({
  transform(chunk, _enc, done) { for (const b of blobsFilter.push(chunk)) this.push(b); done(); },
  flush(done) {
    try { for (const b of blobsFilter.end()) this.push(b); } catch (err) { done(err); return; }
    done();
  },
});`;

function spawnZlib(mode: 'gzip' | 'gunzip', stdin: 'pipe' | Readable): ChildProcess {
  return spawn(process.execPath, ['--expose-gc', '--max-semi-space-size=1', '-e', zlibProgram(mode)], { stdio: [stdin, 'pipe', 'pipe'], env: {} });
}

export interface DumpProcess {
  /** The gzip'd plain-SQL dump. */
  output: Readable;
  /** Resolves when pg_dump and the compressor exited 0; rejects naming the one that did not. */
  finished: Promise<void>;
  kill(): void;
}

/** pg_dump (plain SQL, no owners or grants, as Heroku's --no-owner --no-acl) piped into gzip -6. */
export function startDump(dumpPath: string, url: string): DumpProcess {
  const { dbname, env } = libpqInvocation(url, 'cairn-backup');
  const dump = spawn(dumpPath, ['--format=plain', '--no-owner', '--no-privileges', `--dbname=${dbname}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const dumpExit = exitOf(dump);
  const dumpErr = stderrTail(dump);
  // The compressor reads pg_dump's stdout itself; our copy of that pipe is closed at once, so a
  // compressor that dies makes pg_dump fail on SIGPIPE instead of blocking on a full pipe.
  const zip = spawnZlib('gzip', dump.stdout);
  dump.stdout.destroy();
  const zipExit = exitOf(zip);
  const zipErr = stderrTail(zip);
  const finished = Promise.all([dumpExit, zipExit]).then(([d, z]) => {
    // A compressor that failed first makes pg_dump die of SIGPIPE: then its error is the cause.
    if (d.code !== 0 && !(d.signal === 'SIGPIPE' && z.code !== 0)) throw new Error(`pg_dump failed (${describe(d)}): ${dumpErr() || 'no message'}`);
    if (z.code !== 0) throw new Error(`gzip failed (${describe(z)}): ${zipErr() || 'no message'}`);
  });
  finished.catch(() => undefined);
  return {
    output: zip.stdout!,
    finished,
    kill() {
      dump.kill('SIGKILL');
      zip.kill('SIGKILL');
    },
  };
}

export interface ReplayProcess {
  /** Takes gzip bytes; what they decompress to goes to psql. */
  input: Writable;
  /** Resolves when psql and the decompressor exited 0; rejects with psql's message otherwise. */
  finished: Promise<void>;
  /** SIGKILLs psql first: it must never read the end of a partial script. */
  kill(): void;
  /** psql's own error once it has exited, when it stopped by itself (an SQL error) rather than by kill(). */
  ownFailure(): Promise<Error | undefined>;
}

/** gunzip piped into psql (ON_ERROR_STOP); the caller writes BEGIN and COMMIT into the stream. */
export function startReplay(psqlPath: string, url: string): ReplayProcess {
  const { dbname, env } = libpqInvocation(url, 'cairn-restore');
  const unzip = spawnZlib('gunzip', 'pipe');
  const psql = spawn(psqlPath, ['-X', '-q', '--no-password', '-v', 'ON_ERROR_STOP=1', `--dbname=${dbname}`], { env, stdio: [unzip.stdout!, 'ignore', 'pipe'] });
  unzip.stdout!.destroy();
  const psqlExit = exitOf(psql);
  const psqlErr = stderrTail(psql);
  const unzipExit = exitOf(unzip);
  const unzipErr = stderrTail(unzip);
  const psqlFailed = (e: Exit) => new Error(`psql failed (${describe(e)}): ${psqlErr() || 'no message'}`);
  const finished = Promise.all([psqlExit, unzipExit]).then(([p, z]) => {
    // psql stopping (an SQL error) breaks the decompressor's pipe: psql's message is the cause.
    if (p.code !== 0) throw psqlFailed(p);
    if (z.code !== 0) throw new Error(`gunzip failed (${describe(z)}): ${unzipErr() || 'no message'}`);
  });
  finished.catch(() => undefined);
  return {
    input: unzip.stdin!,
    finished,
    kill() {
      psql.kill('SIGKILL');
      unzip.kill('SIGKILL');
    },
    ownFailure: () => psqlExit.then((e) => (e.code !== null && e.code !== 0 ? psqlFailed(e) : undefined), () => undefined),
  };
}
