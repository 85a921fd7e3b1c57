// SQL for the operator's view of the pipeline: the error intake (accepted, not yet processed), its
// dead letters, and backups whose latest drill failed. Read at scrape time by /metrics and by
// `cairn admin status`; each is one index-friendly aggregate.
import type { Db } from '../../db.ts';

export interface IntakeFigures {
  pending: number;
  /** Age of the oldest accepted event not yet processed; 0 when none waits. */
  oldest_seconds: number;
  /** Rows claimed by a worker whose lease has not run out. */
  leased: number;
}

export function operationsQueries(db: Db) {
  return {
    async intake(): Promise<IntakeFigures> {
      const { rows } = await db.raw<{ rows: { pending: string; oldest: number | null; leased: string }[] }>(
        `select count(*) as pending,
                extract(epoch from now() - min(receive_time))::float8 as oldest,
                count(*) filter (where lease_until > now()) as leased
           from error_event_inbox`,
      );
      const r = rows[0]!;
      return { pending: Number(r.pending), oldest_seconds: Math.max(0, r.oldest ?? 0), leased: Number(r.leased) };
    },

    async deadLetters(): Promise<number> {
      const row = await db('error_event_dead').count<{ n: string }[]>('* as n').first();
      return Number(row?.n ?? 0);
    },
  };
}
