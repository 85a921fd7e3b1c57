// `identity.prune` (daily cron): history past 90 days and ended sessions, tickets and links, and the
// OAuth device requests and social sign-ins that can no longer complete.
import type { queues } from '../src/queues.ts';
import { pruneIdentity } from '../src/domain/identity/prune-queries.ts';
import { oauthQueries } from '../src/domain/oauth/queries.ts';
import { socialQueries } from '../src/domain/social/queries.ts';
import type { JobHandler } from '../src/worker.ts';

export const identityPrune: JobHandler<(typeof queues)['identity.prune']['schema']> = async (_jobs, ctx) => {
  const deleted = {
    ...(await pruneIdentity(ctx.db)),
    device_authorizations: await oauthQueries(ctx.db).prune(),
    social_transactions: await socialQueries(ctx.db).prune(),
  };
  ctx.log.info({ deleted }, 'identity pruned');
};
