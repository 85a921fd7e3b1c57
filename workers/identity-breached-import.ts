// `identity.breached-import`: merges a staged import into the local breached-password store.
import type { queues } from '../src/queues.ts';
import { mergeImport } from '../src/domain/identity/breached/import.ts';
import type { JobHandler } from '../src/worker.ts';

export const identityBreachedImport: JobHandler<(typeof queues)['identity.breached-import']['schema']> = async (
  jobs,
  ctx,
) => {
  for (const job of jobs) {
    await mergeImport(ctx.db, job.data.import_id);
    ctx.log.info({ import_id: job.data.import_id }, 'breached-password import merged');
  }
};
