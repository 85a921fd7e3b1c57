// Group commit for captures (single capture ≥ 2,000 events/s). Each capture's acceptance is a
// committed `errors.ingest` job, and a commit waits for the WAL to reach disk (~2.4 ms here), so
// one INSERT per request caps a web process at a few hundred captures per connection per second.
// Requests that arrive while earlier INSERTs are in flight wait and go together in the next one:
// an idle process writes a capture at once, a busy one writes many per commit. A request still
// answers only after its own jobs are committed, so a 202 keeps meaning "stored-to-be".
//
// Named events (CONTRACT.md "Idempotent capture"): their ids are claimed and the winners' jobs
// queued in one transaction, so an id is claimed exactly when its event is queued.
import type { Knex } from 'knex';
import type { Jobs } from '../../../jobs.ts';
import { packJobs } from './job.ts';
import { fromKnex } from 'pg-boss';
import { bumpPending, ingestQueries, type AcceptedRow, type PendingDeltas } from './queries.ts';

/** `env_id\nevent_id` → the uid that event was accepted with (this time or an earlier one). */
export type Accepted = Map<string, string>;

const key = (r: { env_id: string; event_id?: string | null }) => `${r.env_id}\n${r.event_id}`;

/**
 * Queues the rows' jobs on `db`, and counts them pending in their environments (what
 * `max_pending` bounds) in the same transaction; answers the uids of named events.
 */
export async function enqueueEvents(db: Knex, jobs: Jobs, rows: AcceptedRow[]): Promise<Accepted> {
  return db.transaction(async (trx) => {
    const named = rows.some((r) => r.event_id);
    const accepted = named ? await ingestQueries(trx).claimEventIds(rows) : new Map<string, string>();
    const mine = named ? rows.filter((r) => !r.event_id || accepted.get(key(r)) === r.uid) : rows;
    if (mine.length === 0) return accepted;
    await jobs.enqueueMany(trx, 'errors.ingest', packJobs(mine));
    const deltas: PendingDeltas = new Map();
    for (const r of mine) deltas.set(r.env_id, (deltas.get(r.env_id) ?? 0) + 1);
    await bumpPending(fromKnex(trx), deltas);
    return accepted;
  });
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
}

export class IntakeWriter {
  private readonly queue: Pending[] = [];
  private inFlight = 0;
  private readonly db: Knex;
  private readonly jobs: Jobs;
  private readonly options: IntakeWriterOptions;

  constructor(db: Knex, jobs: Jobs, options: IntakeWriterOptions = { concurrency: 2, maxRows: 2000 }) {
    this.db = db;
    this.jobs = jobs;
    this.options = options;
  }

  /** Resolves once these rows are committed (with the uids of named events); rejects if they were not. */
  write(rows: AcceptedRow[]): Promise<Accepted> {
    return new Promise((resolve, reject) => {
      this.queue.push({ rows, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.options.concurrency && this.queue.length > 0) {
      const group: Pending[] = [this.queue.shift()!];
      let size = group[0]!.rows.length;
      while (this.queue.length > 0 && size + this.queue[0]!.rows.length <= this.options.maxRows) {
        const next = this.queue.shift()!;
        size += next.rows.length;
        group.push(next);
      }
      this.inFlight += 1;
      void this.flush(group).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  private async flush(group: Pending[]): Promise<void> {
    try {
      const accepted = await enqueueEvents(
        this.db,
        this.jobs,
        group.flatMap((p) => p.rows),
      );
      for (const p of group) p.resolve(accepted);
    } catch (err) {
      if (group.length === 1) {
        group[0]!.reject(err);
        return;
      }
      // One request's rows must not fail another's (an environment deleted meanwhile, say):
      // on a failure each request is written on its own and answered by its own outcome.
      await Promise.all(group.map((p) => enqueueEvents(this.db, this.jobs, p.rows).then(p.resolve, p.reject)));
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
