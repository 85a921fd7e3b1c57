// `webhooks.deliver`: one attempt of one delivery (src/domain/webhooks/deliveries/deliver.ts). The sender and
// its kept-alive sockets live as long as the worker; tests pass their own DNS and trust anchors.
import type { AppRegistry, queues } from '../src/queues.ts';
import { deliverAttempt } from '../src/domain/webhooks/deliveries/deliver.ts';
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
    // The fetch's attempts go out together. Each records itself, so one that throws (a database
    // error) fails the fetch only after the others were recorded: their jobs, run again, record
    // nothing twice (deliver.ts).
    const deps = { ...ctx, sender };
    const settled = await Promise.allSettled(
      jobs.map((job) => deliverAttempt(deps, job.data, { queue, jobId: job.id })),
    );
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  };
}
