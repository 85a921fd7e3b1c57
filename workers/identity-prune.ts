// `identity.prune` (daily cron): history past 90 days and ended sessions, tickets and links, and the
// OAuth device requests and social sign-ins that can no longer complete (src/domain/identity/prune.ts).
import type { queues } from '../src/queues.ts';
import { pruneIdentity } from '../src/domain/identity/prune.ts';
import type { JobHandler } from '../src/worker.ts';

export const identityPrune: JobHandler<(typeof queues)['identity.prune']['schema']> = async (_jobs, ctx) => {
  ctx.log.info({ deleted: await pruneIdentity(ctx.db) }, 'identity pruned');
};
