// SQL for Sentry client keys (DSNs) and the environments' DSN project numbers. Every lookup
// returns the key's environment, so the ingest routes never trust a path's number on its own.
import type { Db } from '../../../db.ts';
import { newId } from '../../../ids.ts';

export interface ClientKeyRow {
  id: string;
  env_id: string;
  public_key_sealed: string;
  rate_limit_count: number | null;
  rate_limit_window_seconds: number | null;
  create_time: Date;
  revoke_time: Date | null;
}

export interface ResolvedClientKey extends ClientKeyRow {
  /** The environment's DSN project number (`envs.dsn_project_id`). */
  project_number: string;
}

const columns = [
  'id',
  'env_id',
  'public_key_sealed',
  'rate_limit_count',
  'rate_limit_window_seconds',
  'create_time',
  'revoke_time',
] as const;

export function clientKeyQueries(db: Db) {
  return {
    async insert(row: {
      env_id: string;
      public_key_hash: Buffer;
      public_key_sealed: (id: string) => string;
      rate_limit?: { count: number; window_seconds: number } | undefined;
    }): Promise<ClientKeyRow> {
      const id = newId('ck');
      const [key] = await db('client_keys')
        .insert({
          id,
          env_id: row.env_id,
          public_key_hash: row.public_key_hash,
          public_key_sealed: row.public_key_sealed(id),
          rate_limit_count: row.rate_limit?.count ?? null,
          rate_limit_window_seconds: row.rate_limit?.window_seconds ?? null,
        })
        .returning(columns);
      return key as ClientKeyRow;
    },

    /** The environment's keys that are not revoked, oldest first. */
    async list(envId: string): Promise<ClientKeyRow[]> {
      return db('client_keys').where({ env_id: envId }).whereNull('revoke_time').orderBy('create_time').select(columns);
    },

    /** Revokes once; answers the row, or nothing when the environment has no such key. */
    async revoke(envId: string, id: string): Promise<ClientKeyRow | undefined> {
      await db('client_keys')
        .where({ env_id: envId, id })
        .whereNull('revoke_time')
        .update({ revoke_time: db.fn.now() });
      return db('client_keys').where({ env_id: envId, id }).first(columns);
    },

    async resolve(publicKeyHash: Buffer): Promise<ResolvedClientKey | undefined> {
      return db('client_keys as k')
        .join('envs as e', 'e.id', 'k.env_id')
        .where('k.public_key_hash', publicKeyHash)
        .first(...columns.map((c) => `k.${c}`), db.raw('e.dsn_project_id::text as project_number'));
    },

    async projectNumber(envId: string): Promise<string> {
      const row = await db('envs').where({ id: envId }).first(db.raw('dsn_project_id::text as n'));
      return (row as { n: string }).n;
    },
  };
}
