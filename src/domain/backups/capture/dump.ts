// pg_dump and the compressor (zlib-child.ts): what a backup uploads.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { describe, exitOf, heldOutput, stderrTail, type Exit } from '../children.ts';
import { libpqInvocation } from '../pgtools.ts';
import { spawnZlib, type SqlFigures } from '../zlib-child.ts';

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
export function spawnPgDump(
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
export function bothExited(
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
