// `webhooks.deliver` and `webhooks.deliver-slow`: a fetch's attempts, run together
// (src/domain/webhooks/deliveries/batch.ts). The sender and its kept-alive sockets live as long as
// the worker; tests pass their own DNS and trust anchors.
import type { AppRegistry, queues } from '../src/queues.ts';
import { deliverFetched } from '../src/domain/webhooks/deliveries/batch.ts';
import type { LaneQueue } from '../src/domain/webhooks/deliveries/lanes.ts';
import { createSender, type Sender, type SendOptions } from '../src/domain/webhooks/deliveries/send.ts';
import type { JobHandler } from '../src/worker.ts';

/** The handler of each lane, sharing one sender: `lane(queue)` is the one for that queue. */
export function webhooksDeliver(
  options: SendOptions = {},
): (queue: LaneQueue) => JobHandler<(typeof queues)['webhooks.deliver']['schema'], AppRegistry> {
  let sender: Sender | undefined;
  return (queue) => async (jobs, ctx) => {
    sender ??= createSender(options);
    // An attempt that throws (a database error) fails the fetch only after the others were
    // recorded: their jobs, run again, record nothing twice (batch.ts).
    await deliverFetched({ ...ctx, sender }, queue, jobs);
  };
}
