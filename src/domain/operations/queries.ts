// SQL for the operator's view of the pipeline: the error intake (accepted, not yet processed), its
// dead letters, and backups whose latest drill failed. Read at scrape time by /metrics and by
// `cairn admin status`; each is one aggregate over the queue's own partition of pg-boss's job
// table (`errors.ingest` is partitioned, errors/queues.ts), read-only: pg-boss owns those rows.
import type { Db } from '../../db.ts';
import { deadLetterName } from '../../jobs/index.ts';
import { defaultErrorSettings } from '../errors/retention/queries.ts';

export interface IntakeFigures {
  /** Events accepted and not yet stored. */
  pending: number;
  /** Age of the oldest accepted event not yet processed; 0 when none waits. */
  oldest_seconds: number;
  /** Events in jobs a worker is working now. */
  leased: number;
}

export interface EnvironmentIntake {
  name: string;
  pending: number;
  /** Captures are refused (429) while `pending` is at or over it. */
  max_pending: number;
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

    /**
     * The environments with the most events pending, with the bound that backpressure holds them
     * to (error_settings.max_pending): the counts the captures' 429 decisions read.
     */
    async busiestEnvironments(limit: number): Promise<EnvironmentIntake[]> {
      const { rows } = await db.raw<{ rows: { name: string; pending: string; max_pending: string }[] }>(
        `select e.name, p.pending, coalesce(s.max_pending, ?) as max_pending
           from error_intake_pending p
           join envs e on e.id = p.env_id
           left join error_settings s on s.env_id = p.env_id
          where p.pending > 0
          order by p.pending desc, e.name
          limit ?`,
        [defaultErrorSettings.max_pending, limit],
      );
      return rows.map((r) => ({ name: r.name, pending: Number(r.pending), max_pending: Number(r.max_pending) }));
    },

    /** Dead-lettered events waiting for an operator (kept 30 days, src/jobs/sync.ts). */
    async deadLetters(): Promise<number> {
      const { rows } = await db.raw<{ rows: { n: string | null }[] }>(
        `select sum(jsonb_array_length(data->'events')) as n from pgboss.job where name = ? and state = 'created'`,
        [deadLetterName(intakeQueue)],
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
