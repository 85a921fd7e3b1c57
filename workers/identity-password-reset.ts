// `identity.password-reset`: mails a reset link when the account exists (src/domain/identity/links.ts).
import type { queues } from '../src/queues.ts';
import { sendPasswordReset } from '../src/domain/identity/links/links.ts';
import { createMailer } from '../src/mail/index.ts';
import type { JobHandler } from '../src/worker.ts';

export const identityPasswordReset: JobHandler<(typeof queues)['identity.password-reset']['schema']> = async (
  jobs,
  ctx,
) => {
  const mailer = createMailer(ctx.config, ctx.db, ctx.log);
  for (const job of jobs) await sendPasswordReset({ db: ctx.db, config: ctx.config, mailer }, job.data);
};
