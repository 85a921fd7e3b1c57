// gunzip piped into psql: a restore's replay (apply.ts), COMMIT only on the worker's word.
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { describe, exitOf, stderrTail, type Exit } from '../children.ts';
import { libpqInvocation } from '../pgtools.ts';
import { spawnZlib, type SqlFigures } from '../zlib-child.ts';
import { ownerWarnings } from './owner-warnings.ts';
import type { RoleFilterOptions, Skipped } from './role-filter.ts';

interface RestoreReport extends SqlFigures {
  refused: string | null;
  skipped?: Skipped;
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
