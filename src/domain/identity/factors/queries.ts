// TOTP factors and recovery codes: a step is accepted once (replays refused), a code used once.
import type { Db } from '../../../db.ts';

export interface FactorRow {
  id: string;
  end_user_id: string;
  secret_sealed: string;
  activate_time: Date | null;
  last_step: string | null;
}

export function factorQueries(db: Db) {
  return {
    async factorOf(endUserId: string): Promise<FactorRow | undefined> {
      return db('end_user_totp_factors')
        .where({ end_user_id: endUserId })
        .first('id', 'end_user_id', 'secret_sealed', 'activate_time', 'last_step');
    },

    /** Replaces a factor that was never activated; an active one is kept (the caller checks first). */
    async putPendingFactor(row: { id: string; end_user_id: string; secret_sealed: string }): Promise<boolean> {
      const result = await db.raw<{ rowCount: number }>(
        `insert into end_user_totp_factors (id, end_user_id, secret_sealed) values (?, ?, ?)
         on conflict (end_user_id) do update set id = excluded.id, secret_sealed = excluded.secret_sealed, last_step = null, create_time = now()
         where end_user_totp_factors.activate_time is null`,
        [row.id, row.end_user_id, row.secret_sealed],
      );
      return result.rowCount === 1;
    },

    /** RFC 6238 §5.2: accepts a step only above the last accepted one, atomically. */
    async acceptStep(factorId: string, step: number, activate: boolean): Promise<boolean> {
      const q = db('end_user_totp_factors')
        .where({ id: factorId })
        .where((w) => w.whereNull('last_step').orWhere('last_step', '<', step));
      const n = await q.update({ last_step: step, ...(activate ? { activate_time: db.fn.now() } : {}) });
      return n === 1;
    },

    async deleteFactor(endUserId: string): Promise<void> {
      await db('end_user_totp_factors').where({ end_user_id: endUserId }).delete();
      await db('end_user_recovery_codes').where({ end_user_id: endUserId }).delete();
    },

    async replaceRecoveryCodes(endUserId: string, hashes: Buffer[]): Promise<void> {
      await db('end_user_recovery_codes').where({ end_user_id: endUserId }).delete();
      await db('end_user_recovery_codes').insert(hashes.map((code_hash) => ({ end_user_id: endUserId, code_hash })));
    },

    async useRecoveryCode(endUserId: string, hash: Buffer): Promise<boolean> {
      const n = await db('end_user_recovery_codes')
        .where({ end_user_id: endUserId, code_hash: hash })
        .whereNull('use_time')
        .update({ use_time: db.fn.now() });
      return n === 1;
    },
  };
}
