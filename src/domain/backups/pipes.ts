// The child-process halves of a backup and a restore, wired fd to fd so that the uncompressed SQL
// never passes through Node:
//   backup:  pg_dump ──pipe──▶ gzip -6 ──▶ Node (encrypt, hash, upload)
//   restore: Node (verified gzip bytes) ──▶ gzip -d ──pipe──▶ psql
// Why: with zlib in the worker (the first version), every byte of SQL crossed Node's event loop
// on its way to and from the zlib thread, and the worker's memory churned with it; measured on 2
// cores it reached 0.78–0.90 of `pg_dump | gzip -6` and ~200 MB of RSS. As a process of its own,
// gzip gets a core to itself and Node handles only the compressed bytes (4–35 times fewer). Node's
// zlib is kept as the fallback for a worker without a `gzip` binary (same format).
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
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

let gzipPath: string | null | undefined;

/** `gzip` on PATH, or null: then Node's zlib does the work. */
export function findGzip(): string | null {
  if (gzipPath !== undefined) return gzipPath;
  gzipPath = null;
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    try {
      accessSync(join(dir, 'gzip'), constants.X_OK);
      gzipPath = join(dir, 'gzip');
      break;
    } catch {
      // not here
    }
  }
  return gzipPath;
}

export interface DumpProcess {
  /** The gzip'd plain-SQL dump. */
  output: Readable;
  /** Resolves when pg_dump (and gzip) exited 0; rejects naming the one that did not. */
  finished: Promise<void>;
  kill(): void;
}

export interface PipeOptions {
  /** The gzip binary, or null for Node's zlib; found on PATH when not given. */
  gzip?: string | null;
}

/** pg_dump (plain SQL, no owners or grants, as Heroku's --no-owner --no-acl) piped into gzip -6. */
export function startDump(dumpPath: string, url: string, options: PipeOptions = {}): DumpProcess {
  const { dbname, env } = libpqInvocation(url, 'cairn-backup');
  const dump = spawn(dumpPath, ['--format=plain', '--no-owner', '--no-privileges', `--dbname=${dbname}`], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const dumpExit = exitOf(dump);
  const dumpErr = stderrTail(dump);
  const dumpFailed = (e: Exit) => new Error(`pg_dump failed (${describe(e)}): ${dumpErr() || 'no message'}`);
  const gzip = options.gzip === undefined ? findGzip() : options.gzip;
  if (!gzip) {
    const zipped = createGzip({ level: 6, chunkSize: 128 * 1024 });
    const piping = pipeline(dump.stdout, zipped);
    const finished = Promise.all([dumpExit, piping]).then(([e]) => {
      if (e.code !== 0) throw dumpFailed(e);
    });
    finished.catch(() => undefined);
    return { output: zipped, finished, kill: () => dump.kill('SIGKILL') };
  }
  // gzip reads pg_dump's stdout itself; our copy of that pipe is closed at once, so a gzip that
  // dies makes pg_dump fail on SIGPIPE instead of blocking on a full pipe.
  const zip = spawn(gzip, ['-6', '-n'], { stdio: [dump.stdout, 'pipe', 'pipe'] });
  dump.stdout.destroy();
  const zipExit = exitOf(zip);
  const zipErr = stderrTail(zip);
  const finished = Promise.all([dumpExit, zipExit]).then(([d, z]) => {
    // A gzip that failed first makes pg_dump die of SIGPIPE: then gzip's error is the cause.
    if (d.code !== 0 && !(d.signal === 'SIGPIPE' && z.code !== 0)) throw dumpFailed(d);
    if (z.code !== 0) throw new Error(`gzip failed (${describe(z)}): ${zipErr() || 'no message'}`);
  });
  finished.catch(() => undefined);
  return {
    output: zip.stdout,
    finished,
    kill() {
      dump.kill('SIGKILL');
      zip.kill('SIGKILL');
    },
  };
}

export interface ReplayProcess {
  /** Takes gzip bytes; what it decompresses goes to psql. */
  input: Writable;
  /** Resolves when psql (and gzip) exited 0; rejects with psql's message otherwise. */
  finished: Promise<void>;
  /** SIGKILLs psql first: it must never read the end of a partial script. */
  kill(): void;
  /** psql's own error once it has exited, when it stopped by itself (an SQL error) rather than by kill(). */
  ownFailure(): Promise<Error | undefined>;
}

/** gzip -d piped into psql (ON_ERROR_STOP); the caller writes BEGIN and COMMIT into the stream. */
export function startReplay(psqlPath: string, url: string, options: PipeOptions = {}): ReplayProcess {
  const { dbname, env } = libpqInvocation(url, 'cairn-restore');
  const args = ['-X', '-q', '--no-password', '-v', 'ON_ERROR_STOP=1', `--dbname=${dbname}`];
  const gzip = options.gzip === undefined ? findGzip() : options.gzip;
  const unzip = gzip ? spawn(gzip, ['-d', '-c'], { stdio: ['pipe', 'pipe', 'pipe'] }) : undefined;
  const psql = spawn(psqlPath, args, { env, stdio: [unzip ? unzip.stdout! : 'pipe', 'ignore', 'pipe'] });
  const psqlExit = exitOf(psql);
  const psqlErr = stderrTail(psql);
  const psqlFailed = (e: Exit, cause?: unknown) => new Error(`psql failed (${describe(e)}): ${psqlErr() || 'no message'}`, { cause });
  const ownFailure = () => psqlExit.then((e) => (e.code !== null && e.code !== 0 ? psqlFailed(e) : undefined), () => undefined);
  if (!unzip) {
    const unzipped = createGunzip({ chunkSize: 128 * 1024 });
    const piping = pipeline(unzipped, psql.stdin!);
    const finished = Promise.allSettled([piping]).then(async ([p]) => {
      const e = await psqlExit;
      if (e.code !== 0) throw psqlFailed(e, p.status === 'rejected' ? p.reason : undefined);
      if (p.status === 'rejected') throw p.reason;
    });
    finished.catch(() => undefined);
    return { input: unzipped, finished, kill: () => psql.kill('SIGKILL'), ownFailure };
  }
  unzip.stdout!.destroy();
  const unzipExit = exitOf(unzip);
  const unzipErr = stderrTail(unzip);
  const finished = Promise.all([psqlExit, unzipExit]).then(([p, z]) => {
    // psql stopping (an SQL error) makes gzip die of SIGPIPE: psql's message is the cause.
    if (p.code !== 0) throw psqlFailed(p);
    if (z.code !== 0) throw new Error(`gzip -d failed (${describe(z)}): ${unzipErr() || 'no message'}`);
  });
  finished.catch(() => undefined);
  return {
    input: unzip.stdin!,
    finished,
    kill() {
      psql.kill('SIGKILL');
      unzip.kill('SIGKILL');
    },
    ownFailure,
  };
}
