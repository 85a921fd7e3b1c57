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
//
// What the children measure. Every SQL byte passes through one of them, so they are where the
// dump is checked without the SQL crossing the worker: the compressor counts and hashes what
// pg_dump wrote; the inspector (a backup read back from the store, or a drill's dump of its
// scratch copy) counts, hashes, checks the closing line and takes per-table figures; the restore
// decompressor checks the same before it lets psql see COMMIT (dump-check.ts). Each writes one
// JSON report on fd 3 as it ends.
//
// Reading a child's output: Node resumes every stdio stream nobody reads when the child exits,
// dropping what it held (lib/internal/child_process.js, flushStdio; nodejs/node#5034 spared only
// streams with a 'readable' listener). A small database dumps and compresses before the worker's
// first S3 request returns, so the first backup of a fresh worker came out empty. Every pipe we
// read from a child is therefore taken into a stream of ours the moment the child starts.
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { blobsTransactionFilter } from './blobs-filter.ts';
import { copyStatsScanner, dumpIncompleteReason, type TableFigures } from './dump-check.ts';
import { libpqInvocation } from './pgtools.ts';
import { ownerWarnings } from './owner-warnings.ts';
import { roleStatementFilter, type RoleFilterOptions, type Skipped } from './role-filter.ts';
import { sqlStatementSplitter } from './sql-statements.ts';

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

/** A child's stdout, already being read into a stream of ours (see the top of this file). */
export function heldOutput(child: ChildProcess, highWaterMark = 1024 * 1024): Readable {
  const out = new PassThrough({ highWaterMark });
  child.stdout!.on('error', (err) => out.destroy(err));
  child.stdout!.pipe(out);
  return out;
}

const describe = (e: Exit): string => e.signal ?? `exit ${e.code}`;

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

interface RestoreReport extends SqlFigures {
  refused: string | null;
  skipped?: Skipped;
}

type Mode = 'gzip' | 'inspect' | 'restore';

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
const dumpIncompleteReason = ${dumpIncompleteReason.toString()};
const copyStatsScanner = ${copyStatsScanner.toString()};
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
    gzip: `pipeline(process.stdin, tally, zlib.createGzip({ level: 6, chunkSize: 131072 }), process.stdout, (err) => {
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

/**
 * On the way into psql: the preamble first; pg_dump's own BEGIN/COMMIT around large objects left
 * out (blobs-filter.ts); statements naming roles the target lacks or the restoring role cannot act
 * as left out and counted (role-filter.ts); and COMMIT written only once the whole script has
 * passed and checks out: the byte count and sha256 pg_dump's compressor recorded, and the closing
 * line. A script that
 * does not is refused: psql reads the end of a script whose transaction is still open, and the
 * server rolls it back.
 */
const restoreStages = `
const stage = (filter) => new Transform({
  transform(chunk, _enc, done) { for (const b of filter.push(chunk)) this.push(b); done(); },
  flush(done) {
    try { for (const b of filter.end()) this.push(b); } catch (err) { done(err); return; }
    done();
  },
});
const blobs = stage((${blobsTransactionFilter.toString()})());
// The target's roles arrive on fd 5 (argv holds at most 128 KiB, a server may have thousands).
let roleFilter = null;
const roleOptions = !options.roles ? Promise.resolve(null) : new Promise((resolve, reject) => {
  let text = '';
  const pipe = require('node:fs').createReadStream(null, { fd: 5 });
  pipe.on('data', (d) => { text += d; });
  pipe.on('error', reject);
  pipe.on('close', () => { try { resolve(JSON.parse(text)); } catch (err) { reject(err); } });
});
const withRoles = (fn, done) => roleOptions.then((o) => {
  if (o && !roleFilter) roleFilter = (${roleStatementFilter.toString()})(o, ${sqlStatementSplitter.toString()});
  fn();
}).catch(done);
const roles = new Transform({
  transform(chunk, _enc, done) {
    withRoles(() => { if (!roleFilter) { done(null, chunk); return; } for (const b of roleFilter.push(chunk)) this.push(b); done(); }, done);
  },
  flush(done) {
    withRoles(() => { if (roleFilter) for (const b of roleFilter.end()) this.push(b); done(); }, done);
  },
});
let refused = null;
const gate = new Transform({
  transform(chunk, _enc, done) { done(null, chunk); },
  flush(done) {
    const got = figures();
    const want = options.expected;
    if (want && got.bytes !== want.bytes) refused = 'the backup holds ' + got.bytes + ' bytes of SQL where pg_dump wrote ' + want.bytes;
    else if (want && got.sha256 !== want.sha256) refused = 'the backup\\'s SQL differs from what pg_dump wrote (sha256)';
    else refused = dumpIncompleteReason(tail.toString('latin1'));
    report({ ...got, refused, skipped: roleFilter ? roleFilter.skipped() : { statements: 0, roles: [] } });
    if (refused) { done(new Error(refused)); return; }
    // COMMIT only on the worker's word (fd 4): a worker that dies now means a rollback.
    let said = '';
    const confirm = require('node:fs').createReadStream(null, { fd: 4 });
    confirm.on('data', (d) => { said += d; });
    confirm.on('error', () => undefined);
    confirm.on('close', () => {
      if (said !== 'commit\\n') { refused = 'the worker did not confirm the commit'; done(new Error(refused)); return; }
      this.push('\\nCOMMIT;\\n');
      done();
    });
  },
});
gate.push(options.preamble || '');`;

function spawnZlib(
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

export interface DumpProcess {
  /** The gzip'd plain-SQL dump. */
  output: Readable;
  /** Resolves with what pg_dump wrote once pg_dump and the compressor exited 0; rejects naming the one that did not. */
  finished: Promise<SqlFigures>;
  kill(): void;
}

/**
 * pg_dump (plain SQL, with owners and grants: a restore keeps those its target can take, see
 * role-filter.ts). PGTZ pins the session's time zone to UTC, so a database whose own default is
 * another zone dumps the same text as a copy of it restored elsewhere (a drill compares the two,
 * table by table). With `snapshot`, pg_dump reads the database as that exported snapshot shows it
 * (the one the catalog record was read in, catalog.ts).
 */
function spawnPgDump(
  dumpPath: string,
  url: string,
  snapshot?: string,
): { dump: ChildProcess; exit: Promise<Exit>; stderr: () => string } {
  const { dbname, env } = libpqInvocation(url, 'cairn-backup');
  const args = ['--format=plain', ...(snapshot ? [`--snapshot=${snapshot}`] : []), `--dbname=${dbname}`];
  const dump = spawn(dumpPath, args, {
    env: { ...env, PGTZ: 'UTC' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { dump, exit: exitOf(dump), stderr: stderrTail(dump) };
}

/** Both exits, naming the one that failed; a consumer that failed first makes pg_dump die of SIGPIPE, so then its error is the cause. */
function bothExited(
  pgDump: { exit: Promise<Exit>; stderr: () => string },
  child: ChildProcess,
  what: string,
): Promise<void> {
  const childExit = exitOf(child);
  const childErr = stderrTail(child);
  return Promise.all([pgDump.exit, childExit]).then(([d, z]) => {
    if (d.code !== 0 && !(d.signal === 'SIGPIPE' && z.code !== 0))
      throw new Error(`pg_dump failed (${describe(d)}): ${pgDump.stderr() || 'no message'}`);
    if (z.code !== 0) throw new Error(`${what} failed (${describe(z)}): ${childErr() || 'no message'}`);
  });
}

/** pg_dump piped into gzip -6; the compressor counts and hashes the SQL on the way. */
export function startDump(dumpPath: string, url: string, snapshot?: string): DumpProcess {
  const pgDump = spawnPgDump(dumpPath, url, snapshot);
  // The compressor reads pg_dump's stdout itself; our copy of that pipe is closed at once, so a
  // compressor that dies makes pg_dump fail on SIGPIPE instead of blocking on a full pipe.
  const zip = spawnZlib('gzip', pgDump.dump.stdout!);
  pgDump.dump.stdout!.destroy();
  const output = heldOutput(zip.child);
  const finished = bothExited(pgDump, zip.child, 'gzip').then(async () => {
    const r = (await zip.report) as SqlFigures | undefined;
    if (!r) throw new Error('gzip ended without its report');
    return r;
  });
  finished.catch(() => undefined);
  return {
    output,
    finished,
    kill() {
      pgDump.dump.kill('SIGKILL');
      zip.child.kill('SIGKILL');
    },
  };
}

export interface InspectProcess {
  /** Takes the script (gzip or plain, as asked). */
  input: Writable;
  finished: Promise<InspectReport>;
  kill(): void;
}

function inspectFinished(child: ChildProcess, report: Promise<unknown>): Promise<InspectReport> {
  return report.then((r) => {
    if (!r)
      throw new Error(`the dump inspector failed: ${child.exitCode === null ? 'killed' : `exit ${child.exitCode}`}`);
    return r as InspectReport;
  });
}

/** Reads a whole script and reports its figures (dump-check.ts). */
export function startInspect(options: { gzipped: boolean }): InspectProcess {
  const { child, report } = spawnZlib('inspect', 'pipe', options);
  const err = stderrTail(child);
  const finished = exitOf(child).then((e) => {
    if (e.code !== 0) throw new Error(`the dump inspector failed (${describe(e)}): ${err() || 'no message'}`);
    return inspectFinished(child, report);
  });
  finished.catch(() => undefined);
  return { input: child.stdin!, finished, kill: () => child.kill('SIGKILL') };
}

/** pg_dump straight into an inspector: a drill's figures of its scratch copy. */
export function inspectDatabase(dumpPath: string, url: string): { finished: Promise<InspectReport>; kill(): void } {
  const pgDump = spawnPgDump(dumpPath, url);
  const inspect = spawnZlib('inspect', pgDump.dump.stdout!, { gzipped: false });
  pgDump.dump.stdout!.destroy();
  const finished = bothExited(pgDump, inspect.child, 'the dump inspector').then(() =>
    inspectFinished(inspect.child, inspect.report),
  );
  finished.catch(() => undefined);
  return {
    finished,
    kill() {
      pgDump.dump.kill('SIGKILL');
      inspect.child.kill('SIGKILL');
    },
  };
}

export interface ReplayProcess {
  /** Takes the backup's gzip bytes; the preamble, the dump and (once it checks out and the worker confirms) COMMIT go to psql. */
  input: Writable;
  /** The decompressor's verdict once the whole script has passed: whether it checked out. */
  ready: Promise<{ refused: string | null; skipped?: Skipped } | undefined>;
  /** The transaction id the preamble printed (txid_current), once psql has started the transaction. */
  xid: Promise<string | undefined>;
  /** The worker's word: only now does the decompressor write COMMIT. */
  confirm(): void;
  /** Resolves when psql and the decompressor exited 0; rejects with psql's message, or why the script was refused. */
  finished: Promise<void>;
  /** SIGKILLs psql first: it must never read the end of a partial script. */
  kill(): void;
  /** psql's own error once it has exited, when it stopped by itself (an SQL error) rather than by kill(). */
  ownFailure(): Promise<Error | undefined>;
  /** The roles of owner changes PostgreSQL refused and the script let pass (role-filter.ts), once psql has exited. */
  refusedOwners(): string[];
}

/** The line the preamble makes psql print on stderr (unbuffered, unlike its stdout): `\warn`, psql 13+. */
export const xidMarker = 'cairn-restore-xid:';

/** Raised when the script reached its end but was not the whole dump: nothing was committed. */
export class IncompleteDumpError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'IncompleteDumpError';
  }
}

/**
 * gunzip piped into psql (ON_ERROR_STOP); the decompressor writes the preamble and, after its
 * checks and the worker's confirmation (fd 4), COMMIT. Between the two the worker records the
 * transaction id, so whatever happens to it afterwards, the outcome can be read back from the
 * target (txid_status) instead of guessed.
 */
export function startReplay(
  psqlPath: string,
  url: string,
  options: { preamble: string; expected: SqlFigures | null; roles?: RoleFilterOptions },
): ReplayProcess {
  const { dbname, env } = libpqInvocation(url, 'cairn-restore');
  const { roles, ...rest } = options;
  const unzip = spawnZlib('restore', 'pipe', { ...rest, roles: roles !== undefined });
  const rolePipe = (unzip.child.stdio as unknown as Writable[])[5]!;
  rolePipe.on('error', () => undefined);
  const warnings = ownerWarnings();
  rolePipe.end(roles ? JSON.stringify({ ...roles, nonce: warnings.nonce }) : '');
  const psql = spawn(psqlPath, ['-X', '-q', '--no-password', '-v', 'ON_ERROR_STOP=1', `--dbname=${dbname}`], {
    env,
    stdio: [unzip.child.stdout!, 'ignore', 'pipe'],
  });
  unzip.child.stdout!.destroy();
  const psqlExit = exitOf(psql);
  // psql's stderr holds its errors and, first, the transaction id; the id is not an error.
  let errText = '';
  let resolveXid: (xid: string | undefined) => void = () => undefined;
  const xid = new Promise<string | undefined>((resolve) => (resolveXid = resolve));
  psql.stderr!.on('data', (d: Buffer) => {
    errText = (errText + d.toString('utf8')).slice(-8000);
    const m = new RegExp(`${xidMarker}(\\d+)\\n`).exec(errText);
    if (m) {
      resolveXid(m[1]);
      errText = errText.replace(m[0], '');
    }
    // Owner changes PostgreSQL refused inside their guard (role-filter.ts): counted, not errors.
    errText = warnings.take(errText);
  });
  psqlExit.then(
    () => resolveXid(undefined),
    () => resolveXid(undefined),
  );
  const psqlErr = () => errText.trim().slice(-4000);
  const unzipExit = exitOf(unzip.child);
  const unzipErr = stderrTail(unzip.child);
  const psqlFailed = (e: Exit) => new Error(`psql failed (${describe(e)}): ${psqlErr() || 'no message'}`);
  // A refused script is the cause even when psql failed too: the decompressor exits at once and
  // psql may read a script cut short.
  const finished = Promise.all([psqlExit, unzipExit, unzip.report]).then(([p, z, r]) => {
    const refused = (r as RestoreReport | undefined)?.refused;
    if (refused) throw new IncompleteDumpError(refused);
    // psql stopping (an SQL error) breaks the decompressor's pipe: psql's message is the cause.
    if (p.code !== 0) throw psqlFailed(p);
    if (z.code !== 0) throw new Error(`gunzip failed (${describe(z)}): ${unzipErr() || 'no message'}`);
  });
  finished.catch(() => undefined);
  const word = unzip.child.stdio[4] as Writable;
  word.on('error', () => undefined);
  return {
    input: unzip.child.stdin!,
    ready: unzip.report as Promise<{ refused: string | null; skipped?: Skipped } | undefined>,
    xid,
    confirm: () => word.end('commit\n'),
    finished,
    kill() {
      psql.kill('SIGKILL');
      unzip.child.kill('SIGKILL');
    },
    refusedOwners: () => warnings.roles(),
    ownFailure: () =>
      psqlExit.then(
        (e) => (e.code !== null && e.code !== 0 ? psqlFailed(e) : undefined),
        () => undefined,
      ),
  };
}
