// What the API asks of restores: the checks, the operation and its job, a preview, and an
// operation's state. Each write inserts its row and enqueues its job in one transaction
// (docs/conventions.md "Writes and jobs").
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import { newId } from '../../../ids.ts';
import type { Db } from '../../../db.ts';
import { databaseUrlOf } from '../target-db.ts';
import { captureQueries } from '../capture/queries.ts';
import { getBackup } from '../capture/request.ts';
import type { ServiceDeps } from '../deps.ts';
import { backupQueries, type BackupRow, type EnvTarget, type OperationRow, type Verification } from '../queries.ts';
import { targetTables } from './target.ts';

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
  const active = await captureQueries(db).activeWork(target.id);
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
