// `webhooks.prune` (daily cron): deliveries, attempts and messages past their 30 days
// (src/domain/webhooks/deliveries/prune.ts).
import type { queues } from '../src/queues.ts';
import { pruneWebhooks } from '../src/domain/webhooks/deliveries/prune.ts';
import type { JobHandler } from '../src/worker.ts';

export const webhooksPrune: JobHandler<(typeof queues)['webhooks.prune']['schema']> = async (_jobs, ctx) => {
  ctx.log.info({ deleted: await pruneWebhooks(ctx.db) }, 'webhooks pruned');
};
