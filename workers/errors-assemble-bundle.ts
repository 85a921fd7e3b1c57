// `errors.assemble-bundle`: one artifact bundle uploaded by sentry-cli, made into source maps and
// minified files (domain/errors/sentry/cli/assemble.ts).
import type { queues } from '../src/queues.ts';
import { assembleBundle } from '../src/domain/errors/sentry/cli/assemble.ts';
import type { JobHandler } from '../src/worker.ts';

export const errorsAssembleBundle: JobHandler<(typeof queues)['errors.assemble-bundle']['schema']> = async (
  jobs,
  ctx,
) => {
  for (const job of jobs) await assembleBundle(ctx, job.data.env_id, job.data.checksum);
};
