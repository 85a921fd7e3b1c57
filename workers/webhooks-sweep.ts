// `webhooks.sweep` (every 10 minutes): deliveries whose job is gone, queued again (src/domain/webhooks/outbox/sweep.ts).
import type { AppRegistry, queues } from '../src/queues.ts';
import { sweepDeliveries } from '../src/domain/webhooks/outbox/sweep.ts';
import type { JobHandler } from '../src/worker.ts';

export const webhooksSweep: JobHandler<(typeof queues)['webhooks.sweep']['schema'], AppRegistry> = async (
  _jobs,
  ctx,
) => {
  const swept = await sweepDeliveries(ctx);
  if (swept.requeued + swept.released > 0)
    ctx.log.warn(swept, 'webhook deliveries whose job was gone were queued again');
};
