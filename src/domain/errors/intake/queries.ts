// SQL for captures, their claims and pending counts (the store's statement is store-queries.ts).
// Bulk statements take their rows as one JSON parameter, so a batch of 100 or 1000 is one round
// trip with every value bound, through jsonb_to_recordset (the batch is parsed once). Stored
// bodies travel deflated, as base64 text, and are stored as bytea (event-codec.ts): Postgres
// never parses or compresses a body. Captured payloads wait for the workers sealed, in
// `errors.ingest` jobs (job.ts), never in a table of ours.
import type { Db, SqlTx } from '../../../db.ts';
import type { SealedPayloadRow } from './sealed-payload.ts';
import { defaultErrorSettings } from '../retention/queries.ts';

/**
 * An accepted event; `event_id`, the client's name for it (an id of its own choosing, not a secret)
 * when it is claimed before the answer (capture.ts `ClaimAt`), else none.
 */
export type AcceptedRow = SealedPayloadRow & { event_id?: string | null };

/** How many events of each environment to add to (or, negative, take from) its pending count. */
export type PendingDeltas = Map<string, number>;

/**
 * Claims the named events' ids (in the caller's transaction, which then queues the winners'
 * jobs): an id already claimed, or claimed twice in this batch, is not the caller's to queue.
 * ON CONFLICT DO NOTHING waits for a concurrent claim of the same id to commit or roll back, so
 * exactly one wins. Answers `env_id\nevent_id` → the uid each named event was accepted with.
 */
export async function claimEventIds(tx: SqlTx, rows: AcceptedRow[]): Promise<Map<string, string>> {
  const named = rows.filter((r) => r.event_id).map((r) => ({ env_id: r.env_id, event_id: r.event_id, uid: r.uid }));
  type Claim = { env_id: string; event_id: string; uid: string };
  const { rows: claimed } = (await tx.executeSql(
    `insert into error_event_ids (env_id, event_id, uid)
     select env_id, event_id, uid from jsonb_to_recordset($1::jsonb) as x(env_id text, event_id text, uid text)
     on conflict (env_id, event_id) do nothing
     returning env_id, event_id, uid`,
    [JSON.stringify(named)],
  )) as { rows: Claim[] };
  const winners = new Map(claimed.map((c) => [`${c.env_id}\n${c.event_id}`, c.uid]));
  const lost = named.filter((r) => winners.get(`${r.env_id}\n${r.event_id}`) !== r.uid);
  if (lost.length > 0) {
    // Accepted before (or by a concurrent request, now committed): answer with that uid.
    const { rows: earlier } = (await tx.executeSql(
      `select i.env_id, i.event_id, i.uid from error_event_ids i
         join jsonb_to_recordset($1::jsonb) as x(env_id text, event_id text) on i.env_id = x.env_id and i.event_id = x.event_id`,
      [JSON.stringify(lost.map((r) => ({ env_id: r.env_id, event_id: r.event_id })))],
    )) as { rows: Claim[] };
    for (const e of earlier) winners.set(`${e.env_id}\n${e.event_id}`, e.uid);
  }
  return winners;
}

/**
 * Moves environments' pending counts, on the caller's transaction and as its last statement, so
 * the counter row is locked only for the commit. Rows are taken in env_id order, so two
 * transactions moving several environments never deadlock.
 *
 * Deltas add up as they are, never clamped: a web process adds its commits' events a tenth of a
 * second after them (writer.ts PendingCounts), and an idle worker may store and subtract them
 * first. Clamped at zero, that subtraction was lost and the later addition stayed for good (500
 * phantom events after a run); unclamped, the count is briefly below zero and then exact, in
 * whatever order the two land. Readers take a negative count as none (`backlog`, the operator's
 * view). An operator's redrive of dead letters (their events were counted out when buried) leaves
 * the count that many below what waits until the next reconcile, every 5 minutes (`reconcilePending`).
 */
export async function bumpPending(tx: SqlTx, deltas: PendingDeltas): Promise<void> {
  const entries = [...deltas].filter(([, n]) => n !== 0).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (entries.length === 0) return;
  await tx.executeSql(
    `insert into error_intake_pending as p (env_id, pending)
     select env_id, n from unnest($1::text[], $2::bigint[]) with ordinality as d(env_id, n, i)
      where exists (select 1 from envs e where e.id = d.env_id) order by i
     on conflict (env_id) do update set pending = p.pending + excluded.pending`,
    [entries.map(([env]) => env), entries.map(([, n]) => n)],
  );
}

/**
 * Sets every environment's pending count to the events its queued `errors.ingest` jobs hold
 * now: counts a web process died before adding, or an operator's redrive of dead letters, are
 * put right. Counts added meanwhile for commits before this snapshot may count twice, until
 * the next time: the bound is soft either way.
 *
 * The rows are locked first, in a statement of their own: a worker storing a job decrements its
 * row in the job's transaction, and a count taken before that commit, written after it, would
 * undo the decrement (the count stayed 1 above what waits). Under the lock, the count's
 * statement takes its snapshot after every such commit (READ COMMITTED), and a job stored later
 * is counted and then decremented.
 */
export async function reconcilePending(db: Db): Promise<number> {
  return db.transaction(async (trx) => {
    await trx.raw('select 1 from error_intake_pending order by env_id for update');
    const result = await trx.raw(
      `insert into error_intake_pending as p (env_id, pending)
       select e.id, coalesce(c.n, 0) from envs e
         left join (
           select ev->>'env_id' as env_id, count(*) as n
             from pgboss.job j, jsonb_array_elements(j.data->'events') ev
            where j.name = 'errors.ingest' and j.state in ('created', 'retry', 'active')
            group by 1
         ) c on c.env_id = e.id
        where c.n is not null or exists (select 1 from error_intake_pending x where x.env_id = e.id)
        order by e.id
       on conflict (env_id) do update set pending = excluded.pending
       where p.pending is distinct from excluded.pending`,
    );
    return result.rowCount ?? 0;
  });
}

/** The intake's table (pg-boss's partition of `errors.ingest`) and its dead tuples, as the statistics have them. */
export async function intakeGarbage(
  db: Db,
): Promise<{ table: string; dead_jobs: number; last_autovacuum: Date | null }> {
  const { rows } = await db.raw<{
    rows: { table_name: string; dead: string | null; last_autovacuum: Date | null }[];
  }>(
    `select q.table_name, s.n_dead_tup as dead, s.last_autovacuum
         from pgboss.queue q
         left join pg_stat_user_tables s on s.schemaname = 'pgboss' and s.relname = q.table_name
        where q.name = 'errors.ingest'`,
  );
  const r = rows[0]!;
  return { table: r.table_name, dead_jobs: Number(r.dead ?? 0), last_autovacuum: r.last_autovacuum };
}

/** VACUUM (outside any transaction: it refuses to run in one). */
export async function vacuumTable(db: Db, table: string): Promise<void> {
  await db.raw('vacuum (analyze) ??', [`pgboss.${table}`]);
}

/** An environment's pending events and its bound (error_settings, else the default). */
export async function intakeBacklog(db: Db, envId: string): Promise<{ pending: number; max_pending: number }> {
  const { rows } = await db.raw<{ rows: { pending: string; max_pending: string }[] }>(
    `select greatest(coalesce((select pending from error_intake_pending where env_id = ?), 0), 0) as pending,
              coalesce((select max_pending from error_settings where env_id = ?), ?) as max_pending`,
    [envId, envId, defaultErrorSettings.max_pending],
  );
  return { pending: Number(rows[0]!.pending), max_pending: Number(rows[0]!.max_pending) };
}

/** The uid an event named `eventId` (a Sentry SDK's id) was accepted with in the environment. */
export async function uidOfEventId(db: Db, envId: string, eventId: string): Promise<string | undefined> {
  const row = await db('error_event_ids').where({ env_id: envId, event_id: eventId }).first('uid');
  return (row as { uid: string } | undefined)?.uid;
}

/** Event ids accepted before `before`: their retention is over. */
export async function deleteEventIds(db: Db, before: Date, limit: number): Promise<number> {
  const result = await db.raw(
    'delete from error_event_ids where ctid in (select ctid from error_event_ids where accept_time < ? limit ?)',
    [before, limit],
  );
  return result.rowCount ?? 0;
}
