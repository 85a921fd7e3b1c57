// `identity.sign-up`: hashes the sealed password, creates the user and mails (src/domain/identity/signup.ts).
import type { queues } from '../src/queues.ts';
import { processSignUp } from '../src/domain/identity/signup/signup.ts';
import { createMailer } from '../src/mail/index.ts';
import type { JobHandler } from '../src/worker.ts';

export const identitySignUp: JobHandler<(typeof queues)['identity.sign-up']['schema']> = async (jobs, ctx) => {
  const mailer = createMailer(ctx.config, ctx.db, ctx.log);
  for (const job of jobs)
    await processSignUp({ db: ctx.db, config: ctx.config, mailer, log: ctx.log, jobs: ctx.jobs }, job.data.pending_id);
};
