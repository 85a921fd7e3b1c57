// The inspector (zlib-child.ts): a whole script's figures, from a stored backup read back
// (verify.ts) or from pg_dump of a drill's scratch copy.
import type { ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';
import { describe, exitOf, stderrTail } from '../children.ts';
import { spawnZlib, type InspectReport } from '../zlib-child.ts';
import { bothExited, spawnPgDump } from './dump.ts';

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
