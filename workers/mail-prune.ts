// `mail.prune` (hourly cron): outbox rows past their 7 days (src/mail/outbox.ts).
import type { queues } from '../src/queues.ts';
import { pruneMail } from '../src/mail/outbox.ts';
import type { JobHandler } from '../src/worker.ts';

export const mailPrune: JobHandler<(typeof queues)['mail.prune']['schema']> = async (_jobs, ctx) => {
  ctx.log.info({ deleted: await pruneMail(ctx.db) }, 'mail outbox pruned');
};
