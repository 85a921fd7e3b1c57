// CPU time as the kernel counts it (/proc/<pid>/stat's utime + stime, in clock ticks of 1/100 s):
// of a process, of a process and its children, and of the Postgres backends serving one database.
// Steadier than rates on a shared machine: another program's load slows a run but does not add to
// these.
import { readdirSync, readFileSync } from 'node:fs';
import type { Knex } from 'knex';

/** A stat file's fields after its `(comm)`, which may itself hold spaces and parentheses. */
const fieldsOf = (stat: string): string[] => stat.slice(stat.lastIndexOf(')') + 2).split(' ');
/** utime + stime, in seconds. */
const cpuSeconds = (f: string[]): number => (Number(f[11]) + Number(f[12])) / 100;

/** CPU seconds (user + system) of a process; 0 once it is gone. */
export function cpuOf(pid: number): number {
  try {
    return cpuSeconds(fieldsOf(readFileSync(`/proc/${pid}/stat`, 'utf8')));
  } catch {
    return 0;
  }
}

/** CPU seconds of a process and its children (a web under WEB_CONCURRENCY). */
export function cpuOfTree(pid: number): number {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    // gone
  }
  return cpuOf(pid) + children.reduce((sum, c) => sum + cpuOfTree(c), 0);
}

/** CPU seconds of every Postgres backend serving `dbName` now (this session's own left out). */
export async function postgresCpu(db: Knex, dbName: string): Promise<Map<number, number>> {
  const { rows } = await db.raw<{ rows: { pid: number }[] }>(
    'select pid from pg_stat_activity where datname = ? and pid <> pg_backend_pid()',
    [dbName],
  );
  return new Map(rows.map((r) => [r.pid, cpuOf(r.pid)]));
}

/** Postgres CPU seconds since `before` (backends that started since count from zero). */
export async function postgresCpuSince(db: Knex, dbName: string, before: Map<number, number>): Promise<number> {
  return [...(await postgresCpu(db, dbName))].reduce((a, [pid, now]) => a + now - (before.get(pid) ?? 0), 0);
}

/**
 * CPU seconds of this process by thread: `main` (the event loop), `libuv-worker` (the thread pool:
 * argon2, zlib, crypto's async calls), and the others by name (V8's GC helpers are `V8Worker`).
 */
export function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // ended meanwhile
    }
    const name = Number(tid) === process.pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    out.set(name, (out.get(name) ?? 0) + cpuSeconds(fieldsOf(stat)));
  }
  return out;
}

/** threadCpu's seconds since `before`, by thread name. */
export function threadCpuSince(before: Map<string, number>): Map<string, number> {
  return new Map([...threadCpu()].map(([name, s]) => [name, s - (before.get(name) ?? 0)]));
}
