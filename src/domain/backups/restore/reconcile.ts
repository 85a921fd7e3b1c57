// A restore whose worker died, settled from what its target says.
import type { BackupDeps } from '../deps.ts';
import { backupQueries, type OperationRow } from '../queries.ts';
import { settleOperation } from '../settle.ts';
import { databaseUrlOf } from '../target-db.ts';
import { transactionStatusOf } from './target.ts';

/**
 * Settles a restore whose worker died, from what its target says. Without a recorded transaction
 * id the worker never let COMMIT through, so nothing was committed (its psql, left behind, reads
 * a script without COMMIT and the server rolls it back). With one, txid_status tells: committed →
 * succeeded; aborted → failed, the target unchanged; still open → undecided, read again later.
 */
export async function reconcileRestore(
  deps: BackupDeps,
  op: OperationRow,
): Promise<'succeeded' | 'failed' | 'undecided'> {
  const stopped = 'the worker running this restore stopped before it finished';
  if (!op.restore_xid) {
    // Unless its worker recorded the id meanwhile (a worker taken for gone while alive, after a
    // database restart): then its outcome is read from the target.
    const message = `${stopped}; the target was not changed`;
    if (await failOperation(deps, op, { code: 'internal', message }, { unlessXid: true })) return 'failed';
    const now = (await backupQueries(deps.db).operation(op.id))!;
    if (now.state === 'succeeded' || now.state === 'failed') return now.state;
    return reconcileRestore(deps, now);
  }
  const target = await backupQueries(deps.db).envTarget(op.env_id);
  if (!target) {
    await failOperation(deps, op, {
      code: 'not_found',
      message: `${stopped}, and the target environment no longer exists`,
    });
    return 'failed';
  }
  const status = await transactionStatusOf(databaseUrlOf(deps, target), op.restore_xid).catch(() => 'unreachable');
  if (status === 'committed') {
    await settleOperation(deps, op.id, {
      state: 'succeeded',
      phase: 'done',
      bytes_read: op.bytes_total,
      finish_time: new Date(),
    });
    deps.log.info({ operation_id: op.id }, 'restore reconciled: its transaction committed before its worker stopped');
    return 'succeeded';
  }
  if (status === 'aborted') {
    await failOperation(deps, op, {
      code: 'internal',
      message: `${stopped}; its transaction rolled back, the target was not changed`,
    });
    return 'failed';
  }
  if (status === null) {
    await failOperation(deps, op, {
      code: 'internal',
      message: `${stopped}, and its transaction ${op.restore_xid} is too old for the target to say whether it committed: check the target's data`,
    });
    return 'failed';
  }
  return 'undecided';
}

export async function failOperation(
  deps: BackupDeps,
  op: OperationRow,
  error: { code: string; message: string },
  options: { unlessXid?: boolean } = {},
): Promise<boolean> {
  return settleOperation(
    deps,
    op.id,
    { state: 'failed', error: JSON.stringify(error), finish_time: new Date() },
    options,
  );
}
