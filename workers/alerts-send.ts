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
    // The fetch's jobs' firings go out together, each job settled on its own: one with an action
    // still pending is failed alone (pg-boss retries it with backoff, sending only what is still
    // pending), and the others complete with the fetch. A failed job is no longer active, so the
    // fetch's completion leaves it as it is. A database error throws: the whole fetch runs again,
    // sending again only what was not recorded as sent (at least once).
    const firings = jobs.flatMap((job, j) =>
      (job.data.firing_ids ?? (job.data.firing_id ? [job.data.firing_id] : [])).map((firing_id) => ({
        j,
        send: { firing_id, action_index: job.data.action_index, lastAttempt: job.retryCount >= job.retryLimit },
      })),
    );
    const left = await sendFirings(
      deps,
      firings.map((f) => f.send),
    );
    const failed = new Map<number, string>();
    for (const [i, error] of left.entries())
      if (error !== undefined && !failed.has(firings[i]!.j)) failed.set(firings[i]!.j, error);
    for (const [j, error] of failed)
      await ctx.jobs.boss.fail(queue, jobs[j]!.id, { message: `alert action not sent: ${error}` });
  };
}
