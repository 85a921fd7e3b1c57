// The `alerts.prune` job (hourly): what alerts keep only for a while goes, a bounded batch at a
// time (send/queries.ts pruneAlertsBatch): firings after 30 days (docs/api.md "Alerts"), snoozes
// once over, per-minute counts once older than the longest window a frequency rule may have.
import type { Db } from '../../../db.ts';
import { pruneAlertsBatch } from './queries.ts';

const batch = 5000;

export async function pruneAlerts(db: Db, now: Date = new Date()): Promise<number> {
  let deleted = 0;
  for (let n = -1; n !== 0; deleted += n) n = await pruneAlertsBatch(db, now, batch);
  return deleted;
}
