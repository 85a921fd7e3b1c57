// `identity.prune` (daily cron): history past 90 days and ended sessions, tickets and links.
import type { queues } from '../src/jobs.ts';
import { pruneIdentity } from '../src/domain/identity/prune.ts';
import type { JobHandler } from '../src/worker.ts';

export const identityPrune: JobHandler<(typeof queues)['identity.prune']['schema']> = async (_jobs, ctx) => {
  ctx.log.info({ deleted: await pruneIdentity(ctx.db) }, 'identity pruned');
};
