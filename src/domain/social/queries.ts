// SQL for social sign-in: provider settings per environment, one-use transactions keyed by the
// hash of `state`, and provider identities linked to end users (a null end_user_id is the
// tombstone of a deleted user).
import type { Db } from '../../db.ts';
import { newId } from '../../ids.ts';
import type { SocialProviderName } from '../../contract/social.ts';

export type ProviderName = SocialProviderName;

export interface ProviderRow {
  env_id: string;
  provider: ProviderName;
  enabled: boolean;
  client_id: string | null;
  client_secret_sealed: string | null;
  apple_team_id: string | null;
  apple_key_id: string | null;
  apple_private_key_sealed: string | null;
  issuer: string | null;
  authorization_endpoint: string | null;
  token_endpoint: string | null;
  api_base_url: string | null;
  update_time: Date;
}

export interface TransactionRow {
  env_id: string;
  provider: ProviderName;
  nonce: string;
  code_verifier_sealed: string;
  redirect_url: string;
  session_mode: 'server' | 'browser';
}

export interface IdentityRow {
  id: string;
  end_user_id: string | null;
  provider: string;
  subject: string;
}

/** Social sign-ins never completed, once expired (the daily identity.prune). */
export async function pruneSocialTransactions(db: Db): Promise<number> {
  return db('social_transactions').where('expire_time', '<', db.fn.now()).delete();
}

export function socialQueries(db: Db) {
  return {
    async providers(envId: string): Promise<ProviderRow[]> {
      return db('social_providers').where({ env_id: envId }).orderBy('provider');
    },

    async provider(envId: string, provider: ProviderName): Promise<ProviderRow | undefined> {
      return db('social_providers').where({ env_id: envId, provider }).first();
    },

    async putProvider(row: Omit<ProviderRow, 'update_time'>): Promise<void> {
      await db('social_providers')
        .insert({ ...row, update_time: db.fn.now() })
        .onConflict(['env_id', 'provider'])
        .merge();
    },

    async deleteProvider(envId: string, provider: ProviderName): Promise<boolean> {
      return (await db('social_providers').where({ env_id: envId, provider }).delete()) > 0;
    },

    async insertTransaction(row: TransactionRow & { state_hash: Buffer; lifetime_seconds: number }): Promise<void> {
      const { lifetime_seconds, ...rest } = row;
      await db('social_transactions').insert({
        ...rest,
        expire_time: db.raw('now() + make_interval(secs => ?)', [lifetime_seconds]),
      });
    },

    /** One use: the row is deleted as it is read, so a replayed state finds nothing. */
    async takeTransaction(stateHash: Buffer): Promise<TransactionRow | undefined> {
      const rows = await db('social_transactions')
        .where({ state_hash: stateHash })
        .where('expire_time', '>', db.fn.now())
        .delete()
        .returning(['env_id', 'provider', 'nonce', 'code_verifier_sealed', 'redirect_url', 'session_mode']);
      return rows[0] as TransactionRow | undefined;
    },

    async identity(envId: string, provider: string, subject: string): Promise<IdentityRow | undefined> {
      return db('end_user_identities')
        .where({ env_id: envId, provider, subject })
        .first('id', 'end_user_id', 'provider', 'subject');
    },

    async insertIdentity(row: {
      env_id: string;
      end_user_id: string;
      provider: string;
      subject: string;
      email: string | null;
      email_verified: boolean;
      display_name: string | null;
    }): Promise<void> {
      await db('end_user_identities').insert({ id: newId('idn'), ...row, last_sign_in_time: db.fn.now() });
    },

    async touchIdentity(id: string, email: string | null, emailVerified: boolean): Promise<void> {
      await db('end_user_identities')
        .where({ id })
        .update({ email, email_verified: emailVerified, last_sign_in_time: db.fn.now() });
    },

    /** Before linking to an account whose address nobody proved: its password goes (sessions: revocation.ts). */
    async resetUnverifiedAccount(endUserId: string): Promise<void> {
      await db('end_users')
        .where({ id: endUserId })
        .whereNull('email_verified_time')
        .update({ password_hash: null, update_time: db.fn.now() });
    },
  };
}
