// Starting restore drills (drill.ts): on request, and from the hourly cron when one is due.
import { AppError } from '../../../app-error.ts';
import { newId } from '../../../ids.ts';
import type { ServiceDeps } from '../deps.ts';
import { backupQueries, type OperationRow } from '../queries.ts';
import { drillQueries } from './queries.ts';

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
    const active = await drillQueries(trx).activeDrill(envId);
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
  for (const env of await drillQueries(deps.db).dueDrillEnvs(now, 500)) {
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
