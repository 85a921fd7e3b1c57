// The safety net of delivery (the `webhooks.sweep` job, every 10 minutes). Each attempt's job is
// queued in the transaction that made it due, so a delivery is only stranded when its job itself
// is gone: it ran out of pg-boss's own retries (a database failing for half an hour), or the
// delivery it waited behind was pruned. An attempt overdue by an hour with no job queued, retrying
// or running is queued again under a new job id; a lane whose head waits behind nothing is
// released. Should a job turn up anyway, the attempt's number makes the second record nothing: at
// worst one extra request with the same webhook-id.
import type { Knex } from 'knex';
import type { AnyJobs as Jobs } from '../../../jobs/index.ts';
import { enqueueAttempts } from './emit.ts';
import { releaseNext } from '../deliveries/queries.ts';
import { overdueDeliveries, stalledLanes } from './queries.ts';

const overdueMs = 3600_000;
const batch = 1000;

export async function sweepDeliveries(
  deps: { db: Knex; jobs: Jobs },
  now: Date = new Date(),
): Promise<{ requeued: number; released: number }> {
  const before = new Date(now.getTime() - overdueMs);
  const overdue = await overdueDeliveries(deps.db, before, batch);
  // The hour of the sweep tells its jobs apart from the first, and from each other's.
  await enqueueAttempts(deps.db, deps.jobs, overdue, undefined, `/sweep/${Math.floor(now.getTime() / overdueMs)}`);
  let released = 0;
  for (const lane of await stalledLanes(deps.db, before, batch)) {
    await deps.db.transaction(async (trx) => {
      // Racing a settle's release of the same delivery, only one update finds it still waiting.
      const next = await releaseNext(trx, lane.endpoint_id, lane.subject);
      if (!next) return;
      released += 1;
      await enqueueAttempts(trx, deps.jobs, [next]);
    });
  }
  return { requeued: overdue.length, released };
}
