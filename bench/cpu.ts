// CPU time as the kernel counts it (/proc/<pid>/stat's utime + stime, in clock ticks of 1/100 s):
// of a process, of a process and its children, and of the Postgres backends serving one database.
// Steadier than rates on a shared machine: another program's load slows a run but does not add to
// these.
import { readFileSync } from 'node:fs';
import type { Knex } from 'knex';

const procStat = (pid: number): string[] => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');

/** CPU seconds (user + system) of a process; 0 once it is gone. */
export function cpuOf(pid: number): number {
  try {
    const f = procStat(pid);
    return (Number(f[11]) + Number(f[12])) / 100;
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
