// SQL for the mail outbox (outbox.ts seals the bodies; rows are kept `outboxRetentionDays`).
import type { Db } from '../db.ts';

export interface OutboxRow {
  id: string;
  env_id: string | null;
  to: string;
  subject: string;
  body_sealed: string;
  create_time: Date;
}

export function outboxQueries(db: Db) {
  return {
    async insert(rows: readonly Omit<OutboxRow, 'create_time'>[]): Promise<void> {
      await db('mail_outbox').insert(rows);
    },

    /** An environment's mails, newest first. */
    async list(envId: string, limit: number): Promise<OutboxRow[]> {
      return db<OutboxRow>('mail_outbox').where({ env_id: envId }).orderBy('create_time', 'desc').limit(limit);
    },

    async get(envId: string, id: string): Promise<OutboxRow | undefined> {
      return db<OutboxRow>('mail_outbox').where({ env_id: envId, id }).first();
    },
  };
}

/** Rows older than `days`; answers how many went. */
export async function pruneOutbox(db: Db, days: number): Promise<number> {
  return db('mail_outbox')
    .where('create_time', '<', db.raw('now() - make_interval(days => ?)', [days]))
    .delete();
}
