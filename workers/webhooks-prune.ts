// `webhooks.prune` (daily cron): deliveries and their attempts kept 30 days (docs/api.md "Webhooks"),
// then the messages no delivery needs, a bounded batch at a time.
import type { queues } from '../src/queues.ts';
import { webhookQueries } from '../src/domain/webhooks/queries.ts';
import type { JobHandler } from '../src/worker.ts';

export const keepDeliveriesMs = 30 * 24 * 3600 * 1000;

export const webhooksPrune: JobHandler<(typeof queues)['webhooks.prune']['schema']> = async (_jobs, ctx) => {
  const before = new Date(Date.now() - keepDeliveriesMs);
  let deleted = 0;
  for (let n = -1; n !== 0; deleted += n) n = await webhookQueries(ctx.db).prune(before, 5000);
  ctx.log.info({ deleted }, 'webhooks pruned');
};
