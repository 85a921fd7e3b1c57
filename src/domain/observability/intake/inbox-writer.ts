// Group commit for captures (single capture ≥ 2,000 events/s). Each capture's acceptance
// is a committed inbox row, and a commit waits for the WAL to reach disk (~2.4 ms here), so one
// INSERT per request caps a web process at a few hundred captures per connection per second.
// Requests that arrive while earlier INSERTs are in flight wait and go together in the next one:
// an idle process writes a capture at once, a busy one writes many per commit. A request still
// answers only after its own rows are committed, so a 202 keeps meaning "stored-to-be".
import type { Knex } from 'knex';
import { ingestQueries, type InboxInsert } from './queries.ts';

/** `env_id\nevent_id` → the uid that event was accepted with (this time or an earlier one). */
export type Accepted = Map<string, string>;

interface Pending {
  rows: InboxInsert[];
  resolve: (accepted: Accepted) => void;
  reject: (err: unknown) => void;
}

export interface InboxWriterOptions {
  /** INSERTs in flight at once (each holds a pool connection while it runs). */
  concurrency: number;
  /** Rows per INSERT; a request's rows are never split, so one batchCapture may exceed it. */
  maxRows: number;
}

export class InboxWriter {
  private readonly queue: Pending[] = [];
  private inFlight = 0;
  private readonly db: Knex;
  private readonly options: InboxWriterOptions;

  constructor(db: Knex, options: InboxWriterOptions = { concurrency: 2, maxRows: 2000 }) {
    this.db = db;
    this.options = options;
  }

  /** Resolves once these rows are committed (with the uids of named events); rejects if they were not. */
  write(rows: InboxInsert[]): Promise<Accepted> {
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
    const q = ingestQueries(this.db);
    try {
      const accepted = await q.insertInbox(group.flatMap((p) => p.rows));
      for (const p of group) p.resolve(accepted);
    } catch (err) {
      if (group.length === 1) {
        group[0]!.reject(err);
        return;
      }
      // One request's rows must not fail another's (an environment deleted meanwhile, say):
      // on a failure each request is written on its own and answered by its own outcome.
      await Promise.all(group.map((p) => q.insertInbox(p.rows).then(p.resolve, p.reject)));
    }
  }
}

const writers = new WeakMap<Knex, InboxWriter>();

/** The process's writer for this pool. */
export function inboxWriter(db: Knex): InboxWriter {
  let w = writers.get(db);
  if (!w) {
    w = new InboxWriter(db);
    writers.set(db, w);
  }
  return w;
}
