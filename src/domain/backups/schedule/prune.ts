// Retention: backups own their pruning (workers/backups-prune.ts runs it).
import type { BackupDeps } from '../deps.ts';
import { backupQueries } from '../queries.ts';
import { scheduleQueries } from './queries.ts';

/** Deletes expired backups: the object first, then the row, so a crash between leaves a row to retry. */
export async function pruneExpired(deps: BackupDeps, now: Date): Promise<string[]> {
  const q = { ...backupQueries(deps.db), ...scheduleQueries(deps.db) };
  const removed: string[] = [];
  for (;;) {
    const batch = await q.expired(now, 100);
    if (batch.length === 0) return removed;
    for (const b of batch) {
      await deps.store.abortIncompleteUploads(b.bucket, b.object_key);
      await deps.store.delete(b.bucket, b.object_key);
      await q.deleteBackup(b.id);
      removed.push(b.id);
    }
  }
}
