// Deliveries and their attempts are kept 30 days (docs/api.md "Webhooks"), then the messages no
// delivery needs go too, a bounded batch at a time (the `webhooks.prune` job, daily); and the slow
// lane's admissions whose job has ended (lane-queries.ts).
import type { Db } from '../../../db.ts';
import { pruneSlowAdmissions } from './lane-queries.ts';
import { pruneDeliveries } from './queries.ts';

export const keepDeliveriesMs = 30 * 24 * 3600 * 1000;
const batch = 5000;

/** Deletes what is past its 30 days; answers how many rows went. */
export async function pruneWebhooks(db: Db, now: Date = new Date()): Promise<number> {
  const before = new Date(now.getTime() - keepDeliveriesMs);
  let deleted = 0;
  for (let n = -1; n !== 0; deleted += n) n = await pruneDeliveries(db, before, batch);
  return deleted + (await pruneSlowAdmissions(db));
}
