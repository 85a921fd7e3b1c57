// A backup's or a restore's end, with its webhook event (docs/api.md "Webhooks": backup.succeeded,
// backup.failed, restore.succeeded, restore.failed) written in the same transaction: the event
// exists exactly when the end committed, and a run settled twice (a reaped orphan) emits once,
// because only the change from an unsettled state emits.
import { fromKnex } from 'pg-boss';
import { backupEvent, restoreEvent } from './present.ts';
import { emit } from '../webhooks/outbox/emit.ts';
import type { BackupDeps } from './deps.ts';
import { backupQueries, type BackupRow, type OperationRow } from './queries.ts';

const settled = (state: string) => state === 'succeeded' || state === 'failed';

/**
 * `run`: the row's `interruptions` when the settling run started. A run whose backup was
 * interrupted since (its worker was taken for gone while alive, after a database restart, and the
 * backup handed to another run) settles nothing: false.
 */
export async function settleBackup(
  deps: Pick<BackupDeps, 'db' | 'jobs'>,
  id: string,
  patch: Partial<BackupRow> & { state: 'succeeded' | 'failed' },
  run?: number,
): Promise<boolean> {
  return deps.db.transaction(async (trx) => {
    const q = backupQueries(trx);
    const before = await q.lockedBackupState(id);
    if (run !== undefined && before && before.interruptions !== run) return false;
    await q.updateBackup(id, patch);
    if (!before || settled(before.state)) return true;
    const row = await q.backup(id);
    if (row) await emit(fromKnex(trx), deps.jobs, [backupEvent(row)]);
    return true;
  });
}

/**
 * A restore's or a drill's end; only restores have events. `unlessXid`: not when the operation
 * has a recorded transaction id by now (its COMMIT may have gone through: the caller reads the
 * target again); false then.
 */
export async function settleOperation(
  deps: Pick<BackupDeps, 'db' | 'jobs'>,
  id: string,
  patch: Partial<Omit<OperationRow, 'error'>> & { error?: string; state: 'succeeded' | 'failed' },
  options: { unlessXid?: boolean } = {},
): Promise<boolean> {
  return deps.db.transaction(async (trx) => {
    const q = backupQueries(trx);
    const before = await q.lockedOperationState(id);
    if (options.unlessXid && before?.restore_xid) return false;
    await q.updateOperation(id, patch);
    if (!before || settled(before.state) || before.kind !== 'restore') return true;
    const op = (await q.operation(id))!;
    const target = await q.envTarget(op.env_id);
    await emit(fromKnex(trx), deps.jobs, [restoreEvent(op, target?.name ?? '')]);
    return true;
  });
}
