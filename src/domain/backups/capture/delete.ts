// Deleting one backup (Heroku's `pg:backups:delete`): its object and its row go together. The row
// is locked while the object is removed and is deleted in the same transaction, so a failure of the
// store leaves the backup as it was (listed, downloadable) instead of a row with no object; a
// commit that fails after the object went leaves a row whose download answers an error, which the
// next delete removes. A backup that is still running, or that a restore or drill is reading,
// cannot be deleted. What it was stays on record (deleted_backups) for the day's free count and billing.
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import type { ObjectStore } from '../../../storage/object-store.ts';
import { backupQueries } from '../queries.ts';
import { deleteQueries } from './queries.ts';

export async function deleteBackup(deps: { db: Knex; store: ObjectStore }, envId: string, id: string): Promise<void> {
  await deps.db.transaction(async (trx) => {
    const q = deleteQueries(trx);
    const b = await q.lockedBackup(envId, id);
    if (!b) throw new AppError('not_found', `no backup ${id} in this environment`);
    if (b.state === 'pending' || b.state === 'running')
      throw new AppError('INVALID_STATE', `backup ${id} is ${b.state}; delete it once it has ended`, {
        details: { state: b.state },
      });
    const reader = await q.activeReader(id);
    if (reader)
      throw new AppError(
        'INVALID_STATE',
        `backup ${id} is being read by operations/${reader.id}; delete it once that has ended`,
        {
          details: { operation: `operations/${reader.id}` },
        },
      );
    await deps.store.abortIncompleteUploads(b.bucket, b.object_key);
    await deps.store.delete(b.bucket, b.object_key);
    // Kept on record: the day's free count and billing still see it (migrations: deleted_backups).
    await q.recordDeleted(b);
    await backupQueries(trx).deleteBackup(id);
  });
}
