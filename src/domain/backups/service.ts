// What the API asks of backups: manual backups (with the free ten a day), lists, usage, restore
// operations. Each write inserts its row and enqueues its job in one transaction (docs/conventions.md "Writes and jobs").
import type { Knex } from 'knex';
import { AppError } from '../../app-error.ts';
import { newId } from '../../ids.ts';
import type { Config } from '../../config.ts';
import type { Db } from '../../db.ts';
import { databaseUrlOf } from './capture.ts';
import { backupObjectKey, freeManualPerDay, startOfUtcDay, usdPerGbMonth } from './deps.ts';
import type { Enqueuer } from './maintenance.ts';
import { targetTables } from './target-preview.ts';
import { effectiveDrillSchedule } from './drill.ts';
import {
  backupQueries,
  type BackupRow,
  type BackupSettings,
  type DrillSchedule,
  type EnvTarget,
  type OperationRow,
  type Verification,
} from './queries.ts';

export interface ServiceDeps {
  config: Config;
  db: Knex;
  jobs: Enqueuer;
}

/** POST …/backups: a manual backup; the eleventh and later of a UTC day still run, marked billable. */
export async function requestManualBackup(deps: ServiceDeps, envId: string, now = new Date()): Promise<BackupRow> {
  return deps.db.transaction(async (trx) => {
    const q = backupQueries(trx);
    await q.lockEnvRow(envId);
    const env = await q.envTarget(envId);
    if (!env) throw new AppError('not_found', 'the environment no longer exists');
    if (!env.database_url_enc) {
      throw new AppError(
        'conflict',
        `${env.name} has no database to back up; the operator sets one with \`cairn admin env set-database\``,
      );
    }
    const active = await q.activeWork(envId);
    if (active)
      throw new AppError(
        'conflict',
        `${active.id} is already running for this environment; one backup or restore at a time`,
        { details: { active: active.id } },
      );
    const usedToday = await q.countManualSince(envId, startOfUtcDay(now));
    const settings = await q.settings(envId);
    const row = await q.insertBackup({
      id: newId('backup', now.getTime()),
      env_id: envId,
      type: 'manual',
      trigger: 'manual',
      slot: null,
      bucket: deps.config.CAIRN_BACKUP_BUCKET,
      object_key: backupObjectKey(env.project_id, env.id, now),
      billable: usedToday >= freeManualPerDay,
      create_time: now,
      expire_time: new Date(now.getTime() + settings.retention_days.manual * 86_400_000),
    });
    await deps.jobs.enqueue(trx, 'backups.capture', { backup_id: row!.id });
    return row!;
  });
}

/** A backup of the caller's environment; another environment's is not_found, not forbidden. */
export async function getBackup(db: Db, envId: string, id: string): Promise<BackupRow> {
  const b = await backupQueries(db).backup(id);
  if (!b || b.env_id !== envId) throw new AppError('not_found', `no backup ${id} in this environment`);
  return b;
}

export async function backupUsage(db: Knex, envId: string, now = new Date()) {
  const q = backupQueries(db);
  const manualToday = await q.countManualSince(envId, startOfUtcDay(now));
  const storedBytes = await q.storedBytes(envId);
  const storedGb = storedBytes / 2 ** 30;
  return {
    date: now.toISOString().slice(0, 10),
    manual_today: manualToday,
    free_manual_per_day: freeManualPerDay,
    free_left: Math.max(0, freeManualPerDay - manualToday),
    billable_today: Math.max(0, manualToday - freeManualPerDay),
    stored_bytes: storedBytes,
    stored_gb: Math.round(storedGb * 1e6) / 1e6,
    usd_per_gb_month: usdPerGbMonth,
    monthly_estimate_usd: Math.round(storedGb * usdPerGbMonth * 1e4) / 1e4,
  };
}

/**
 * What a restore checks, for the restore and for its preview alike: the key belongs to the
 * backup's environment; the target is an environment of the same project (docs/api.md), with a
 * database and nothing else running. `lock` takes the target's row lock first (the restore's
 * transaction), so two requests cannot both pass the last check.
 */
async function checkRestore(
  db: Db,
  callerEnvId: string,
  backupId: string,
  targetEnvName: string,
  lock: boolean,
): Promise<{ backup: BackupRow; target: EnvTarget }> {
  const q = backupQueries(db);
  const backup = await getBackup(db, callerEnvId, backupId);
  if (backup.state !== 'succeeded')
    throw new AppError('conflict', `${backupId} is ${backup.state}; only a succeeded backup can be restored`);
  const caller = await q.envTarget(callerEnvId);
  const target = await q.envByName(targetEnvName);
  if (!target || !caller || target.project_id !== caller.project_id) {
    throw new AppError('not_found', `no environment ${targetEnvName} in this project`, {
      details: { field: 'body.targetEnv' },
    });
  }
  // A live environment holds real users' data: only a key of a live environment may replace it,
  // so a test key (the one in CI, on laptops, in a staging app) can never overwrite production.
  if (target.mode === 'live' && caller.mode !== 'live') {
    throw new AppError(
      'forbidden',
      `${target.name} is a live environment: restoring into it needs a secret key of a live environment, and this key belongs to the test environment ${caller.name}`,
    );
  }
  if (lock) await q.lockEnvRow(target.id);
  if (!target.database_url_enc)
    throw new AppError(
      'conflict',
      `${target.name} has no database; the operator sets one with \`cairn admin env set-database\``,
    );
  const active = await q.activeWork(target.id);
  if (active)
    throw new AppError(
      'conflict',
      `${active.id} is already running for ${target.name}; one backup or restore at a time`,
      { details: { active: active.id } },
    );
  return { backup, target };
}

/** POST /v1/backups/{id}/restore: the checks, then the operation and its job, in one transaction. */
export async function requestRestore(
  deps: ServiceDeps,
  callerEnvId: string,
  backupId: string,
  targetEnvName: string,
): Promise<{ op: OperationRow; targetName: string }> {
  return deps.db.transaction(async (trx) => {
    const { backup, target } = await checkRestore(trx, callerEnvId, backupId, targetEnvName, true);
    const op = await backupQueries(trx).insertOperation({
      id: newId('op'),
      kind: 'restore',
      requester_env_id: callerEnvId,
      env_id: target.id,
      backup_id: backup.id,
    });
    await deps.jobs.enqueue(trx, 'backups.restore', { operation_id: op.id });
    return { op, targetName: target.name };
  });
}

/**
 * The checks of a restore without the restore (Google AIP-163 "validate only"): the same errors as
 * requestRestore, and on success what it would replace (the target's tables with row estimates,
 * read from its catalog), so that `cairn backups restore` can show it before the operator
 * confirms. Never where the database lives. Nothing is written or enqueued.
 */
export async function previewRestore(deps: ServiceDeps, callerEnvId: string, backupId: string, targetEnvName: string) {
  const { backup, target } = await checkRestore(deps.db, callerEnvId, backupId, targetEnvName, false);
  const replaces = await targetTables(databaseUrlOf(deps, target));
  return {
    backup,
    target_env: target.name,
    target_mode: target.mode,
    replaces,
    ...(replaces
      ? {}
      : {
          replaces_unknown:
            'the target database did not answer, so its tables could not be listed; the restore itself will say if it cannot reach it',
        }),
  };
}

export async function getOperation(
  db: Knex,
  callerEnvId: string,
  id: string,
): Promise<{ op: OperationRow; targetName: string; verification: Verification | null }> {
  const q = backupQueries(db);
  const op = await q.operation(id);
  if (!op || (op.requester_env_id !== callerEnvId && op.env_id !== callerEnvId))
    throw new AppError('not_found', `no operation ${id}`);
  const target = await q.envTarget(op.env_id);
  // A drill's verdict lives on its backup (the latest drill's); the operation shows it once done.
  const drilled =
    op.kind === 'drill' && op.state === 'succeeded' && op.backup_id ? await q.backup(op.backup_id) : undefined;
  return { op, targetName: target?.name ?? op.env_id, verification: drilled?.verification ?? null };
}

/** The settings as they apply: an unset drill schedule shows the mode's default. */
export async function getSettings(
  db: Knex,
  envId: string,
): Promise<Omit<BackupSettings, 'drill_schedule'> & { drill_schedule: DrillSchedule }> {
  const q = backupQueries(db);
  const [settings, env] = await Promise.all([q.settings(envId), q.envTarget(envId)]);
  if (!env) throw new AppError('not_found', 'the environment no longer exists');
  return { ...settings, drill_schedule: effectiveDrillSchedule(env.mode, settings.drill_schedule) };
}

/** PUT replaces schedule and retention; a body without `drill_schedule` or `schedule_hour_utc` keeps the current one. */
export async function saveSettings(
  db: Knex,
  envId: string,
  settings: Omit<BackupSettings, 'drill_schedule' | 'schedule_hour_utc'> & {
    drill_schedule?: DrillSchedule | undefined;
    schedule_hour_utc?: number | undefined;
  },
) {
  await db.transaction(async (trx) => {
    const q = backupQueries(trx);
    const current = await q.settings(envId);
    await q.saveSettings(envId, {
      ...settings,
      drill_schedule: settings.drill_schedule ?? current.drill_schedule,
      schedule_hour_utc: settings.schedule_hour_utc ?? current.schedule_hour_utc,
    });
  });
  return getSettings(db, envId);
}
