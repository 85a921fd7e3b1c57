// Emailed links (verification, password reset): stored as hashes, used once.
import type { Db } from '../../../db.ts';

export function linkQueries(db: Db) {
  return {
    /** Spends the user's unused links of one purpose (after a reset, older reset links are void). */
    async spendEmailTokens(endUserId: string, purpose: 'verify_email' | 'reset_password'): Promise<void> {
      await db('end_user_email_tokens')
        .where({ end_user_id: endUserId, purpose })
        .whereNull('use_time')
        .update({ use_time: db.fn.now() });
    },

    async insertEmailToken(row: {
      token_hash: Buffer;
      env_id: string;
      end_user_id: string;
      purpose: 'verify_email' | 'reset_password';
      redirect_url: string | null;
      lifetime_seconds: number;
    }): Promise<void> {
      const { lifetime_seconds, ...rest } = row;
      await db('end_user_email_tokens').insert({
        ...rest,
        expire_time: db.raw('now() + make_interval(secs => ?)', [lifetime_seconds]),
      });
    },

    async useEmailToken(
      tokenHash: Buffer,
      purpose: 'verify_email' | 'reset_password',
    ): Promise<{ env_id: string; end_user_id: string; redirect_url: string | null } | undefined> {
      const rows = await db('end_user_email_tokens')
        .where({ token_hash: tokenHash, purpose })
        .whereNull('use_time')
        .where('expire_time', '>', db.fn.now())
        .update({ use_time: db.fn.now() })
        .returning(['env_id', 'end_user_id', 'redirect_url']);
      return rows[0] as { env_id: string; end_user_id: string; redirect_url: string | null } | undefined;
    },
  };
}

/** Emailed links' tokens a day after they expired. */
export async function pruneEmailTokens(db: Db): Promise<number> {
  return db('end_user_email_tokens')
    .where('expire_time', '<', db.raw(`now() - make_interval(days => ?)`, [1]))
    .delete();
}
