// `alerts.prune` (hourly cron): firings past their 30 days, snoozes past their time, per-minute
// counts past a day (src/domain/alerts/send/prune.ts).
import type { queues } from '../src/queues.ts';
import { pruneAlerts } from '../src/domain/alerts/send/prune.ts';
import type { JobHandler } from '../src/worker.ts';

export const alertsPrune: JobHandler<(typeof queues)['alerts.prune']['schema']> = async (_jobs, ctx) => {
  ctx.log.info({ deleted: await pruneAlerts(ctx.db) }, 'alerts pruned');
};
