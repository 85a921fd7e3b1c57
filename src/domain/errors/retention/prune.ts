// Retention (docs/api.md "Retention"): each environment keeps its events `retention_days` (default
// 90) after their receipt, then they go, and with them the groups left without events. Run daily
// by the `errors.prune` job and on demand by `cairn admin errors prune`.
//
// error_events is partitioned by day of receipt (the migration says why): a day that every
// environment's retention has passed is dropped whole, in milliseconds whatever it holds; only
// environments keeping events for less than the longest retention have rows deleted, by the
// (env_id, receive_time) index, in bounded statements. A group's lifetime occurrence_count stays
// as it was when some of its events go (Sentry's "times seen" is a lifetime count too), and so do
// its tags' counts; a tag or user row goes once its last event is past retention, and the group's
// `user_count` with it.
import type { Db } from '../../../db.ts';
import {
  type EnvFilter,
  defaultErrorSettings,
  deleteEmptyGroups,
  deleteEvents,
  deleteHours,
  deleteTags,
  deleteUsers,
  dropPartition,
  makePartitions,
  errorSettings,
  listPartitions,
  retentionsByDays,
} from './queries.ts';

const day = 86_400_000;
const batch = 10_000;
/** Partitions made ahead, so an insert always finds its day (also at release, src/migrate.ts). */
export const partitionsAhead = 14;

export interface PruneResult {
  deleted_events: number;
  deleted_groups: number;
}

export interface PruneOptions {
  /** One environment only (its events and groups; no partition is dropped). */
  envId?: string;
  /** Everything received longer ago than this, whatever the retention says. */
  olderThanMs?: number;
}

const startOfDay = (t: number): Date => new Date(Math.floor(t / day) * day);

/** Day partitions from `from` (default yesterday) to `partitionsAhead` days from now. */
export async function ensurePartitions(db: Db, now: Date, from = new Date(now.getTime() - day)): Promise<void> {
  const first = startOfDay(Math.min(from.getTime(), now.getTime() - day));
  await makePartitions(db, first, Math.ceil((now.getTime() - first.getTime()) / day) + partitionsAhead + 1);
}

async function deleteAll(db: Db, filter: EnvFilter, before: Date, result: PruneResult): Promise<void> {
  for (let n = batch; n === batch; result.deleted_events += n) n = await deleteEvents(db, filter, before, batch);
  for (let n = batch; n === batch; result.deleted_groups += n) n = await deleteEmptyGroups(db, filter, before, batch);
  for (let n = batch; n === batch;) n = await deleteHours(db, filter, before, batch);
  // Tags and users no stored event carries any longer (their times are their events' receipts).
  for (let n = batch; n === batch;) n = await deleteTags(db, filter, before, batch);
  for (let n = 1; n > 0;) n = await deleteUsers(db, filter, before, 1000);
}

export async function pruneErrors(db: Db, now: Date, options: PruneOptions = {}): Promise<PruneResult> {
  const result: PruneResult = { deleted_events: 0, deleted_groups: 0 };
  await ensurePartitions(db, now);
  if (options.envId !== undefined) {
    const days = (await errorSettings(db, options.envId)).retention_days;
    const before = new Date(now.getTime() - (options.olderThanMs ?? days * day));
    await deleteAll(db, { only: [options.envId] }, before, result);
    return result;
  }
  const retentions = await retentionsByDays(db);
  const others = [...retentions.values()].flat();
  // Cutoffs per retention: the default for every environment not named in error_settings.
  const cutoffs: [EnvFilter, Date][] =
    options.olderThanMs !== undefined
      ? [[{ except: [] }, new Date(now.getTime() - options.olderThanMs)]]
      : [
          [{ except: others }, new Date(now.getTime() - defaultErrorSettings.retention_days * day)],
          ...[...retentions].map(([days, envs]): [EnvFilter, Date] => [
            { only: envs },
            new Date(now.getTime() - days * day),
          ]),
        ];
  // A day every environment is done with goes whole: its end is before the earliest cutoff.
  const earliest = Math.min(...cutoffs.map(([, at]) => at.getTime()));
  for (const p of await listPartitions(db)) {
    if (p.day.getTime() + day <= earliest) result.deleted_events += await dropPartition(db, p.name);
  }
  for (const [filter, before] of cutoffs) await deleteAll(db, filter, before, result);
  return result;
}
