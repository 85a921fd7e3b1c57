// Group commit for captures (single capture ≥ 2,000 events/s). Each capture's acceptance is a
// committed `errors.ingest` job, and a commit waits for the WAL to reach disk (~2.4 ms here), so
// one INSERT per request caps a web process at a few hundred captures per connection per second.
// Requests that arrive while earlier INSERTs are in flight wait and go together in the next one:
// an idle process writes a capture at once, a busy one writes many per commit. A request still
// answers only after its own jobs are committed, so a 202 keeps meaning "stored-to-be".
//
// Named events (docs/api.md "Idempotent capture"): their ids are claimed and the winners' jobs
// queued in one transaction, so an id is claimed exactly when its event is queued.
import type { Knex } from 'knex';
import type { ErrorJobs as Jobs } from '../queues.ts';
import { packJobs } from './job.ts';
import { fromKnex } from 'pg-boss';
import { rawTransaction } from '../../../db.ts';
import { bumpPending, claimEventIds, type AcceptedRow, type PendingDeltas } from './queries.ts';

/** `env_id\nevent_id` → the uid that event was accepted with (this time or an earlier one). */
export type Accepted = Map<string, string>;

const key = (r: { env_id: string; event_id?: string | null }) => `${r.env_id}\n${r.event_id}`;

/** Queues the rows' jobs on `db`; answers the uids of named events, and the rows it queued. */
export async function enqueueEvents(
  db: Knex,
  jobs: Jobs,
  rows: AcceptedRow[],
): Promise<{ accepted: Accepted; queued: AcceptedRow[] }> {
  if (!rows.some((r) => r.event_id)) {
    await jobs.enqueueMany(db, 'errors.ingest', packJobs(rows));
    return { accepted: new Map(), queued: rows };
  }
  // Plain BEGIN/COMMIT on one connection: knex's transaction object cost more CPU than the claim.
  return rawTransaction(db, async (tx) => {
    const accepted = await claimEventIds(tx, rows);
    const queued = rows.filter((r) => !r.event_id || accepted.get(key(r)) === r.uid);
    if (queued.length > 0) await jobs.enqueueMany(tx, 'errors.ingest', packJobs(queued));
    return { accepted, queued };
  });
}

/**
 * For tests that order a race: awaited before each count is written, so a test can make an idle
 * worker store the events first (the order a busy database makes happen now and then). Unset in
 * production.
 */
export const pendingCountHooks: { beforeFlush?: (() => Promise<void>) | undefined } = {};

/**
 * Counts queued events pending in their environments (what `max_pending` bounds), a tenth of a
 * second after they were queued, many commits in one statement. Counting in each commit's own
 * transaction cost single captures ~20% of their rate at 16 in flight (three more round trips per
 * commit, measured with bench/errors.ts). The bound is soft anyway (capture.ts reads it at most
 * once a second). A web process that stops writes what it holds before it releases its pool
 * (server.ts `stop`, `drain`); one that dies loses at most this tenth of a second of counts, which
 * then reads low until the count is reconciled.
 */
export class PendingCounts {
  private deltas: PendingDeltas = new Map();
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private readonly db: Knex;
  private readonly delayMs: number;

  constructor(db: Knex, delayMs = 100) {
    this.db = db;
    this.delayMs = delayMs;
  }

  add(rows: readonly AcceptedRow[]): void {
    for (const r of rows) this.deltas.set(r.env_id, (this.deltas.get(r.env_id) ?? 0) + 1);
    this.timer ??= setTimeout(() => void this.flush(), this.delayMs).unref();
  }

  /** Writes what it holds now, after the write in flight: a stopping process's last counts. */
  async drain(): Promise<void> {
    clearTimeout(this.timer);
    await this.inFlight;
    await this.flush();
    clearTimeout(this.timer);
  }

  flush(): Promise<void> {
    const run = this.write();
    this.inFlight = run;
    return run;
  }

  private async write(): Promise<void> {
    await this.inFlight;
    this.timer = undefined;
    const deltas = this.deltas;
    this.deltas = new Map();
    try {
      await pendingCountHooks.beforeFlush?.();
      await bumpPending(fromKnex(this.db), deltas);
    } catch {
      // Postgres is away: the counts wait for the next try.
      for (const [env, n] of deltas) this.deltas.set(env, (this.deltas.get(env) ?? 0) + n);
      this.timer ??= setTimeout(() => void this.flush(), 1000).unref();
    }
  }
}

interface Pending {
  rows: AcceptedRow[];
  resolve: (accepted: Accepted) => void;
  reject: (err: unknown) => void;
}

export interface IntakeWriterOptions {
  /** INSERTs in flight at once (each holds a pool connection while it runs). */
  concurrency: number;
  /** Rows per INSERT; a request's rows are never split, so one batchCapture may exceed it. */
  maxRows: number;
  /** Requests of at most this many rows are small: they go first, and one INSERT is always theirs. */
  smallRows: number;
}

/**
 * Fair intake: small requests (single captures, a Sentry envelope) are written before batches and
 * always have one INSERT of their own, so a 1000-event batch in flight never makes a single
 * capture wait for it; batches share the other INSERTs in arrival order.
 */
export class IntakeWriter {
  private readonly small: Pending[] = [];
  private readonly large: Pending[] = [];
  private inFlight = 0;
  private largeInFlight = 0;
  private readonly db: Knex;
  private readonly jobs: Jobs;
  private readonly options: IntakeWriterOptions;
  readonly pending: PendingCounts;

  constructor(db: Knex, jobs: Jobs, options: IntakeWriterOptions = { concurrency: 2, maxRows: 2000, smallRows: 100 }) {
    this.db = db;
    this.jobs = jobs;
    this.options = options;
    this.pending = new PendingCounts(db);
  }

  /** Resolves once these rows are committed (with the uids of named events); rejects if they were not. */
  write(rows: AcceptedRow[]): Promise<Accepted> {
    return new Promise((resolve, reject) => {
      (rows.length <= this.options.smallRows ? this.small : this.large).push({ rows, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    const largeSlots = Math.max(1, this.options.concurrency - 1);
    while (this.inFlight < this.options.concurrency) {
      const large = this.small.length === 0;
      const queue = large ? this.large : this.small;
      if (queue.length === 0 || (large && this.largeInFlight >= largeSlots)) return;
      const group: Pending[] = [queue.shift()!];
      let size = group[0]!.rows.length;
      while (queue.length > 0 && size + queue[0]!.rows.length <= this.options.maxRows) {
        const next = queue.shift()!;
        size += next.rows.length;
        group.push(next);
      }
      this.inFlight += 1;
      if (large) this.largeInFlight += 1;
      void this.flush(group).finally(() => {
        this.inFlight -= 1;
        if (large) this.largeInFlight -= 1;
        this.pump();
      });
    }
  }

  private async flush(group: Pending[]): Promise<void> {
    try {
      const { accepted, queued } = await enqueueEvents(
        this.db,
        this.jobs,
        group.flatMap((p) => p.rows),
      );
      this.pending.add(queued);
      for (const p of group) p.resolve(accepted);
    } catch (err) {
      if (group.length === 1) {
        group[0]!.reject(err);
        return;
      }
      // One request's rows must not fail another's (an environment deleted meanwhile, say):
      // on a failure each request is written on its own and answered by its own outcome.
      await Promise.all(
        group.map((p) =>
          enqueueEvents(this.db, this.jobs, p.rows).then(({ accepted, queued }) => {
            this.pending.add(queued);
            p.resolve(accepted);
          }, p.reject),
        ),
      );
    }
  }
}

const writers = new WeakMap<Jobs, IntakeWriter>();

/** The process's writer for this pool and queue. */
export function intakeWriter(db: Knex, jobs: Jobs): IntakeWriter {
  let w = writers.get(jobs);
  if (!w) {
    w = new IntakeWriter(db, jobs);
    writers.set(jobs, w);
  }
  return w;
}
