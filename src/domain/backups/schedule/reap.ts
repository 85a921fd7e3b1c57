// Reaping runs whose worker died: backups run again, restores are settled from their target.
import { interruptBackup } from '../capture/capture.ts';
import type { BackupDeps } from '../deps.ts';
import { tryLockEnv } from '../lock.ts';
import { reconcileRestore } from '../restore/reconcile.ts';
import { sweepTempDirs } from '../restore/fetch.ts';
import { reapQueries } from './queries.ts';

/**
 * Fails runs whose worker is gone. A live run holds its environment's advisory lock for its whole
 * length, so a `running` row whose lock we can take has no one working on it.
 */
export async function reapOrphans(deps: BackupDeps): Promise<{ backups: string[]; operations: string[] }> {
  const q = reapQueries(deps.db);
  const out = { backups: [] as string[], operations: [] as string[] };
  await sweepTempDirs();
  for (const envId of await q.runningEnvIds()) {
    const lock = await tryLockEnv(deps.db, envId);
    if (!lock) continue;
    try {
      // Cut off: the upload is aborted now; the backup's job runs it again when pg-boss redelivers it.
      for (const b of await q.runningBackups(envId)) {
        await interruptBackup(deps, b, 'the worker running this backup stopped before it finished');
        out.backups.push(b.id);
      }
      for (const op of await q.runningOperations(envId)) {
        if ((await reconcileRestore(deps, op)) !== 'undecided') out.operations.push(op.id);
      }
    } finally {
      await lock.release();
    }
  }
  return out;
}
