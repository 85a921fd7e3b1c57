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
// without it the drill fails and says so.
import pg from 'pg';
import { AppError } from '../../app-error.ts';
import { newId } from '../../ids.ts';
import { databaseUrlOf } from './capture.ts';
import { catalogDifferences, catalogOf } from './catalog.ts';
import { catalogStore } from './catalog-queries.ts';
import type { BackupDeps } from './deps.ts';
import type { TableFigures } from './dump-check.ts';
import { findTool } from './pgtools.ts';
import { inspectDatabase } from './pipes.ts';
import {
  backupQueries,
  type BackupRow,
  type DrillSchedule,
  type EnvTarget,
  type OperationRow,
  type Verification,
} from './queries.ts';
import { restoreObject } from './restore.ts';
import type { ServiceDeps } from './service.ts';

export function effectiveDrillSchedule(mode: EnvTarget['mode'], setting: DrillSchedule | null): DrillSchedule {
  return setting ?? (mode === 'live' ? 'off' : 'weekly');
}

/** What differs between the figures recorded at dump time and those of the restored copy. */
export function tableDifferences(
  recorded: Record<string, TableFigures>,
  restored: Record<string, TableFigures>,
): string[] {
  const problems: string[] = [];
  for (const [table, want] of Object.entries(recorded)) {
    const got = restored[table];
    if (!got) problems.push(`${table} is missing after the restore`);
    else if (got.rows !== want.rows)
      problems.push(`${table} had ${want.rows} rows at dump time and ${got.rows} after the restore`);
    else if (got.checksum !== want.checksum)
      problems.push(
        `${table}'s rows differ from those at dump time (checksum ${want.checksum}, restored ${got.checksum})`,
      );
  }
  for (const table of Object.keys(restored))
    if (!(table in recorded)) problems.push(`${table} appears after the restore but was not in the backup`);
  return problems;
}

/** Why a backup has no catalog record: taken before they were kept, or one was not read (catalog.ts). */
export const noCatalog =
  'rows compared; no catalog was recorded with the backup (taken before catalogs were recorded, on a server older than PostgreSQL 12, or its catalog session was lost), so it was not compared';

/** A drill's reason: the first few differences, and how many more; null when there are none. */
export function summarize(problems: string[]): string | null {
  if (problems.length === 0) return null;
  const more = problems.length > 5 ? `, and ${problems.length - 5} more` : '';
  return `${problems.slice(0, 5).join('; ')}${more}`;
}

/** POST …/backups:drill and the cron: one drill of the environment's latest succeeded backup. */
export async function requestDrill(
  deps: Pick<ServiceDeps, 'db' | 'jobs'>,
  envId: string,
): Promise<{ op: OperationRow; targetName: string }> {
  return deps.db.transaction(async (trx) => {
    const q = backupQueries(trx);
    await q.lockEnvRow(envId);
    const env = await q.envTarget(envId);
    if (!env) throw new AppError('not_found', 'the environment no longer exists');
    if (!env.database_url_enc)
      throw new AppError(
        'conflict',
        `${env.name} has no database; the operator sets one with \`cairn admin env set-database\``,
      );
    const active = await q.activeDrill(envId);
    if (active)
      throw new AppError('conflict', `drill ${active.id} is already queued or running for this environment`, {
        details: { active: active.id },
      });
    const latest = await q.latestSucceeded(envId);
    if (!latest)
      throw new AppError(
        'conflict',
        `${env.name} has no succeeded backup to drill yet; take one with \`cairn backups create --env ${env.name}\``,
      );
    const op = await q.insertOperation({
      id: newId('op'),
      kind: 'drill',
      requester_env_id: envId,
      env_id: envId,
      backup_id: latest.id,
    });
    await deps.jobs.enqueue(trx, 'backups.drill', { operation_id: op.id });
    return { op, targetName: env.name };
  });
}

/** The hourly cron: starts every drill that is due. */
export async function startDueDrills(deps: Pick<ServiceDeps, 'db' | 'jobs'>, now = new Date()): Promise<number> {
  let started = 0;
  for (const env of await backupQueries(deps.db).dueDrillEnvs(now, 500)) {
    try {
      await requestDrill(deps, env.id);
      started += 1;
    } catch (err) {
      // Raced by a manual drill or a change to the environment: its next slot will tell.
      if (!(err instanceof AppError)) throw err;
    }
  }
  return started;
}

function scratchUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function onServer<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: url,
    application_name: 'cairn-drill',
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function dropScratch(url: string, name: string): Promise<void> {
  await onServer(url, async (c) => {
    // WITH (FORCE) ends sessions left by a killed psql (PostgreSQL 13+); older servers lack it.
    await c
      .query(`drop database if exists "${name}" with (force)`)
      .catch(() => c.query(`drop database if exists "${name}"`));
  });
}

async function createScratch(url: string, name: string): Promise<void> {
  await onServer(url, async (c) => {
    try {
      await c.query(`create database "${name}" template template0`);
    } catch (err) {
      if ((err as { code?: string }).code === '42501') {
        throw new AppError(
          'forbidden',
          'the role in the environment\'s database URL may not create databases: a drill restores into a scratch database on the same server, so grant it CREATEDB or set drill_schedule to "off"',
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
    await t.markDrilled(env.id, now);
    await t.updateOperation(op.id, { state: 'succeeded', phase: 'done', finish_time: now });
  });
  const log = verdict.result === 'passed' ? deps.log.info.bind(deps.log) : deps.log.warn.bind(deps.log);
  log({ operation_id: op.id, backup_id: backup.id, env_id: env.id, verification: verdict }, 'restore drill done');
}
