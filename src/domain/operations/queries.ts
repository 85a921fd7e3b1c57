// SQL for the operator's view of the pipeline: the error intake (accepted, not yet processed), its
// dead letters, and backups whose latest drill failed. Read at scrape time by /metrics and by
// `cairn admin status`; each is one aggregate over the queue's own partition of pg-boss's job
// table (`errors.ingest` is partitioned, src/jobs.ts), read-only: pg-boss owns those rows.
import type { Db } from '../../db.ts';
import { deadLetterName } from '../../jobs.ts';

export interface IntakeFigures {
  /** Events accepted and not yet stored. */
  pending: number;
  /** Age of the oldest accepted event not yet processed; 0 when none waits. */
  oldest_seconds: number;
  /** Events in jobs a worker is working now. */
  leased: number;
}

const intakeQueue = 'errors.ingest';

export function operationsQueries(db: Db) {
  return {
    async intake(): Promise<IntakeFigures> {
      const { rows } = await db.raw<{
        rows: { pending: string | null; oldest: number | null; leased: string | null }[];
      }>(
        `select sum(jsonb_array_length(data->'events')) as pending,
                extract(epoch from now() - min(created_on))::float8 as oldest,
                sum(jsonb_array_length(data->'events')) filter (where state = 'active') as leased
           from pgboss.job where name = ? and state in ('created', 'retry', 'active')`,
        [intakeQueue],
      );
      const r = rows[0]!;
      return {
        pending: Number(r.pending ?? 0),
        oldest_seconds: Math.max(0, r.oldest ?? 0),
        leased: Number(r.leased ?? 0),
      };
    },

    /** Dead-lettered events waiting for an operator (kept 30 days, src/jobs.ts). */
    async deadLetters(): Promise<number> {
      const { rows } = await db.raw<{ rows: { n: string | null }[] }>(
        `select sum(jsonb_array_length(data->'events')) as n from pgboss.job where name = ? and state = 'created'`,
        [deadLetterName(intakeQueue)],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
