// `alerts.send`: a firing's actions (src/domain/alerts/send/send.ts). The mailer and the
// Slack sender (its kept-alive sockets) live as long as the worker; tests pass their own sender
// options (DNS, trust anchors, timeout).
import type { AppRegistry, queues } from '../src/queues.ts';
import { createSender, type Sender, type SendOptions } from '../src/domain/webhooks/deliveries/send.ts';
import { sendFiring, slackTimeoutMs } from '../src/domain/alerts/send/send.ts';
import { createMailer, type Mailer } from '../src/mail/index.ts';
import type { JobHandler } from '../src/worker.ts';

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
    for (const job of jobs) await sendFiring(deps, { ...job.data, lastAttempt: job.retryCount >= job.retryLimit });
  };
}
