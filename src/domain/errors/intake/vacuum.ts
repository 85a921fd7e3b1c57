// The intake does not bloat. Every accepted event's job is inserted by a capture and deleted when a
// worker stores it, so the intake's table (pg-boss's partition of `errors.ingest`) is all dead
// tuples a moment later; only VACUUM makes their space reusable. Autovacuum does it within a
// minute when it runs, but it may be off or far behind (measured with it off: 135 MB left behind
// by 180,000 events, growing without end; bench/intake-bloat.ts). So a worker checks every minute
// and vacuums the table itself when it holds more dead jobs than `minDead` and autovacuum has not
// run on it for two minutes. A plain VACUUM takes no lock that captures or workers wait on.
import type { Db } from '../../../db.ts';
import { intakeGarbage, vacuumTable } from './queries.ts';

export interface IntakeVacuum {
  vacuumed: boolean;
  table: string;
  dead_jobs: number;
}

export async function vacuumIntake(
  db: Db,
  { minDead = 1000, autovacuumGraceMs = 120_000 } = {},
): Promise<IntakeVacuum> {
  const g = await intakeGarbage(db);
  const recent = g.last_autovacuum !== null && Date.now() - g.last_autovacuum.getTime() < autovacuumGraceMs;
  if (g.dead_jobs < minDead || recent) return { vacuumed: false, table: g.table, dead_jobs: g.dead_jobs };
  await vacuumTable(db, g.table);
  return { vacuumed: true, table: g.table, dead_jobs: g.dead_jobs };
}
