// Pending sign-ups: the request's row (its password sealed) until the worker has decided and mailed.
import type { Db } from '../../../db.ts';

export interface PendingRow {
  id: string;
  env_id: string;
  email: string;
  password_sealed: string | null;
  redirect_url: string | null;
  outcome: 'created' | 'exists' | 'breached' | null;
  end_user_id: string | null;
}

export function signupQueries(db: Db) {
  return {
    async insert(row: Pick<PendingRow, 'id' | 'env_id' | 'email' | 'redirect_url' | 'password_sealed'>): Promise<void> {
      await db('identity_pending_signups').insert(row);
    },

    async byId(id: string): Promise<PendingRow | undefined> {
      return (await db('identity_pending_signups').where({ id }).first()) as PendingRow | undefined;
    },

    /** The decision, stored before mailing; the sealed password goes with it. */
    async decide(id: string, outcome: NonNullable<PendingRow['outcome']>, endUserId: string | null): Promise<void> {
      await db('identity_pending_signups')
        .where({ id })
        .update({ outcome, end_user_id: endUserId, password_sealed: null });
    },

    async remove(id: string): Promise<void> {
      await db('identity_pending_signups').where({ id }).delete();
    },
  };
}

/** A sign-up whose job died (dead letter) keeps its sealed password no longer than a day. */
export async function prunePendingSignups(db: Db): Promise<number> {
  return db('identity_pending_signups')
    .where('create_time', '<', db.raw(`now() - make_interval(days => ?)`, [1]))
    .delete();
}
