// `alerts.send`: a firing's actions (src/domain/alerts/send/send.ts). The mailer and the
// Slack sender (its kept-alive sockets) live as long as the worker; tests pass their own sender
// options (DNS, trust anchors, timeout).
import type { AppRegistry, queues } from '../src/queues.ts';
import { createSender, type Sender, type SendOptions } from '../src/domain/webhooks/deliveries/send.ts';
import { sendFirings, slackTimeoutMs } from '../src/domain/alerts/send/send.ts';
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
    // The fetch's firings go out together, each its own job: one whose action is still pending is
    // failed alone (pg-boss retries it with backoff, its retries counted on it alone), and the
    // others complete with the fetch. A failed job is no longer active, so the fetch's completion
    // leaves it as it is. A database error throws: the whole fetch runs again, sending again only
    // what was not recorded as sent (at least once).
    const left = await sendFirings(
      deps,
      jobs.map((job) => ({ ...job.data, lastAttempt: job.retryCount >= job.retryLimit })),
    );
    for (const [i, error] of left.entries())
      if (error !== undefined)
        await ctx.jobs.boss.fail(queue, jobs[i]!.id, { message: `alert action not sent: ${error}` });
  };
}
