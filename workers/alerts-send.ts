// `alerts.send`: a firing's actions (src/domain/alerts/send/send.ts). The mailer and the
// Slack sender (its kept-alive sockets) live as long as the worker; tests pass their own sender
// options (DNS, trust anchors, timeout).
import type { AppRegistry, queues } from '../src/queues.ts';
import { createSender, type Sender, type SendOptions } from '../src/domain/webhooks/deliveries/send.ts';
import { sendFiring, slackTimeoutMs } from '../src/domain/alerts/send/send.ts';
import { createMailer, type Mailer } from '../src/mail/index.ts';
import type { JobHandler } from '../src/worker.ts';

const queue = 'alerts.send';

export function alertsSend(
  options: SendOptions = {},
): JobHandler<(typeof queues)['alerts.send']['schema'], AppRegistry> {
  let sender: Sender | undefined;
  const mailers = new WeakMap<object, Mailer>();
  return async (jobs, ctx) => {
    sender ??= createSender({ timeoutMs: slackTimeoutMs, ...options });
    let mailer = mailers.get(ctx.db);
    if (!mailer) mailers.set(ctx.db, (mailer = createMailer(ctx.config, ctx.db, ctx.log)));
    const deps = { config: ctx.config, db: ctx.db, log: ctx.log, mailer, sender };
    // The fetch's firings go out together, each its own job: one that fails is failed alone (pg-boss
    // retries it with backoff, its retries counted on it alone), and the others complete with the
    // fetch. A failed job is no longer active, so the fetch's completion leaves it as it is.
    const settled = await Promise.allSettled(
      jobs.map((job) => sendFiring(deps, { ...job.data, lastAttempt: job.retryCount >= job.retryLimit })),
    );
    for (const [i, r] of settled.entries()) {
      if (r.status === 'fulfilled') continue;
      const err = r.reason as unknown;
      await ctx.jobs.boss.fail(queue, jobs[i]!.id, { message: err instanceof Error ? err.message : String(err) });
    }
  };
}
