// The facets backfill (`errors.backfill-facets`, queued by every release; docs/api.md "Search"):
// events stored before the store kept their groups' tags and users (error_events.facets_kept
// false: stored by an earlier release, or by one of its workers still running during a deploy)
// are read in batches, their bodies inflated, and their facets added, each batch in one
// transaction with the cursor's move (the migration create_error_facets_backfill draws both).
// Exactly once: a batch commits with its cursor or not at all, runs take turns on the cursor's
// lock, and the store's own events (facets_kept true) are never read. Once it finds no more, the
// cursor is done and later runs return at once.
//
// The boundary is the flag, not a time: an event accepted before the release and stored after it
// is counted by the store alone. Not covered: an event an earlier release's worker stores behind
// the cursor after the walk passed it (a deploy whose old workers outlive the walk); the job
// starts on the new workers, after the old ones were told to stop.
import type { Knex } from 'knex';
import type { PgBoss } from 'pg-boss';
import { unpackBody } from '../pipeline/event-codec.ts';
import { facetsOf } from '../pipeline/facets.ts';
import { addFacets, backfillDone, lockCursor, moveCursor, oldEvents, type FacetRow, type OldEvent } from './queries.ts';

export interface BackfillResult {
  /** Events whose facets this run added. */
  events: number;
  /** The walk is over (now or before). */
  done: boolean;
}

export interface BackfillOptions {
  /** Events per transaction. */
  batch?: number;
  /** Stops between batches (a worker stopping): the job goes on from the cursor later. */
  signal?: AbortSignal;
  /** Called after each committed batch (tests stop a run there). */
  afterBatch?: (events: number) => Promise<void> | void;
}

function facetRow(e: OldEvent): FacetRow {
  const { tags, user } = facetsOf(unpackBody(e.body_deflated));
  const { uid, env_id, group_id, receive_time, event_time, release } = e;
  return { uid, env_id, group_id, receive_time, event_time, release, tags, ...user };
}

/** One batch: answers how many events it added, or undefined when the walk is done. */
async function step(db: Knex, batch: number): Promise<number | undefined> {
  return db.transaction(async (trx) => {
    const cursor = await lockCursor(trx);
    if (cursor.done_time) return undefined;
    const events = await oldEvents(trx, cursor, batch);
    if (events.length > 0) await addFacets(trx, events.map(facetRow));
    await moveCursor(trx, events.at(-1), events.length);
    return events.length > 0 ? events.length : undefined;
  });
}

export async function backfillFacets(db: Knex, options: BackfillOptions = {}): Promise<BackfillResult> {
  const batch = options.batch ?? 500;
  let added = 0;
  for (;;) {
    if (options.signal?.aborted) return { events: added, done: false };
    const n = await step(db, batch);
    if (n === undefined) return { events: added, done: true };
    added += n;
    await options.afterBatch?.(n);
  }
}

export const backfillQueue = 'errors.backfill-facets';

/** Queues the backfill unless it is done (src/migrate.ts, at every release). */
export async function queueFacetsBackfill(db: Knex, boss: PgBoss): Promise<void> {
  if (!(await backfillDone(db))) await boss.send(backfillQueue, {});
}
