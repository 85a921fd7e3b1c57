// Restore drills: the proof most backup services never give. A drill restores an environment's
// latest succeeded backup into a scratch database on the same server, through the very path a
// restore takes (download, segment authentication, the script checked whole before COMMIT),
// dumps the scratch copy again and compares every table's row count and checksum with those
// found in the backup when it was taken (dump-check.ts), and its catalog with the one recorded in
// the dump's own snapshot (catalog.ts), object by object, then drops the scratch database. The
// result is recorded on the backup (`verified_time`, `verification`), shown by the API and the
// CLI, and counted in /readyz while it says `failed`.
//
// Schedule: `off`, `daily` or `weekly` per environment (backup_settings); unset means weekly in
// test environments and off in live ones, whose owners turn it on (a drill costs a full restore's
// load on their database server). An hourly cron starts the drills that are due.
//
// The scratch database is `cairn_drill_<operation id>`, so a drill the worker did not finish is
// found and dropped when its job runs again. It needs the environment's role to have CREATEDB;
// without it the drill fails and says so, and how to grant it or turn drills off.
import { AppError } from '../../../app-error.ts';
import { databaseUrlOf, onTarget } from '../target-db.ts';
import { catalogDifferences, catalogOf } from '../capture/catalog.ts';
import { catalogStore } from '../capture/catalog-queries.ts';
import { inspectDatabase } from '../capture/inspect.ts';
import type { BackupDeps } from '../deps.ts';
import { findTool } from '../pgtools.ts';
import { backupQueries, type BackupRow, type Verification } from '../queries.ts';
import { restoreObject } from '../restore/apply.ts';

import { noCatalog, summarize, tableDifferences } from './compare.ts';
import { createDatabase, dropDatabase, drillQueries } from './queries.ts';

function scratchUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function dropScratch(url: string, name: string): Promise<void> {
  await onTarget(url, 'cairn-drill', (c) => dropDatabase(c, name));
}

async function createScratch(url: string, name: string): Promise<void> {
  await onTarget(url, 'cairn-drill', async (c) => {
    try {
      await createDatabase(c, name);
    } catch (err) {
      if ((err as { code?: string }).code === '42501') {
        throw new AppError(
          'forbidden',
          'the role in the environment\'s database URL lacks CREATEDB, and a drill restores the backup into a scratch database it creates on the same server (the backup itself is not at fault). Fix: as a superuser of that server run ALTER ROLE <that role> CREATEDB, or turn drills off with `cairn backups settings --drills off` (drill_schedule "off" in PUT …/backup_settings)',
        );
      }
      throw err;
    }
  });
}

/** Restores `backup` into a scratch database and compares; answers the verdict. Never throws for a bad backup. */
async function drillBackup(
  deps: BackupDeps,
  backup: BackupRow,
  url: string,
  scratch: string,
  progress: (phase: string, read: number, total: number) => void,
): Promise<Verification> {
  try {
    await dropScratch(url, scratch);
    await createScratch(url, scratch);
    await restoreObject(deps, backup, scratchUrl(url, scratch), progress);
    progress('comparing', 0, 0);
    const restored = await inspectDatabase((await findTool('pg_dump')).path, scratchUrl(url, scratch)).finished;
    if (!backup.table_stats)
      return {
        result: 'passed',
        reason: 'restored whole; the backup was taken before per-table figures were recorded, so none were compared',
      };
    const recorded = await catalogStore(deps.db).get(backup.id);
    const problems = [
      ...tableDifferences(backup.table_stats, restored.tables),
      ...(recorded ? catalogDifferences(recorded, (await catalogOf(scratchUrl(url, scratch))) ?? recorded) : []),
    ];
    const problem = summarize(problems);
    if (problem) return { result: 'failed', reason: problem };
    return recorded
      ? { result: 'passed' }
      : {
          result: 'passed',
          reason: noCatalog,
        };
  } catch (err) {
    return { result: 'failed', reason: err instanceof Error ? err.message : String(err) };
  } finally {
    await dropScratch(url, scratch).catch((err: unknown) =>
      deps.log.warn({ err, scratch }, "could not drop the drill's scratch database"),
    );
  }
}

/** The queue handler's entry: idempotent; a drill the worker did not finish runs again from the start. */
export async function runDrill(deps: BackupDeps, operationId: string): Promise<void> {
  const q = backupQueries(deps.db);
  const op = await q.operation(operationId);
  if (!op || op.kind !== 'drill' || op.state === 'succeeded' || op.state === 'failed') return;
  await q.updateOperation(op.id, { state: 'running', phase: 'verifying', bytes_read: '0', bytes_total: '0' });
  const backup = op.backup_id ? await q.backup(op.backup_id) : undefined;
  const env = await q.envTarget(op.env_id);
  if (!backup || backup.state !== 'succeeded' || !env) {
    await q.updateOperation(op.id, {
      state: 'failed',
      phase: 'done',
      finish_time: new Date(),
      error: JSON.stringify({ code: 'not_found', message: 'the backup to drill no longer exists' }),
    });
    return;
  }
  let last = 0;
  // Progress writes are chained, and drained before the final state, so none lands after it.
  let writes = Promise.resolve();
  const progress = (phase: string, read: number, total: number) => {
    if (Date.now() - last < 1000 && phase !== 'comparing') return;
    last = Date.now();
    writes = writes
      .then(() => q.updateOperation(op.id, { phase, bytes_read: String(read), bytes_total: String(total) }))
      .catch(() => undefined);
  };
  const verdict = await drillBackup(deps, backup, databaseUrlOf(deps, env), `cairn_drill_${op.id}`, progress);
  await writes;
  const now = new Date();
  await deps.db.transaction(async (trx) => {
    const t = backupQueries(trx);
    await t.updateBackup(backup.id, { verified_time: now, verification: verdict });
    await drillQueries(trx).markDrilled(env.id, now);
    await t.updateOperation(op.id, { state: 'succeeded', phase: 'done', finish_time: now });
  });
  const log = verdict.result === 'passed' ? deps.log.info.bind(deps.log) : deps.log.warn.bind(deps.log);
  log({ operation_id: op.id, backup_id: backup.id, env_id: env.id, verification: verdict }, 'restore drill done');
}
