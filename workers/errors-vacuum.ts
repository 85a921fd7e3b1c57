// `errors.vacuum` (every minute): the intake's table vacuumed when autovacuum has not kept up
// (domain/errors/intake/vacuum.ts).
import type { queues } from '../src/queues.ts';
import { vacuumIntake } from '../src/domain/errors/intake/vacuum.ts';
import type { JobHandler } from '../src/worker.ts';

export const errorsVacuum: JobHandler<(typeof queues)['errors.vacuum']['schema']> = async (_jobs, ctx) => {
  const done = await vacuumIntake(ctx.db);
  if (done.vacuumed) ctx.log.info(done, 'vacuumed the error intake');
};
