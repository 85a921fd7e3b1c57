// SQL for orgs, projects, environments and keys. Every key lookup returns its environment, so
// callers never have to trust a path segment on its own.
import type { Db } from '../../db.ts';
import { newId } from '../../ids.ts';
import type { EnvMode, KeyKind, Scope } from './keys.ts';
import { envName, type EnvPath } from './names.ts';

export interface EnvRow {
  id: string;
  name: string;
  mode: EnvMode;
  project_id: string;
  settings: Record<string, unknown>;
  create_time: Date;
}

export interface KeyRow {
  id: string;
  env_id: string;
  kind: KeyKind;
  hint: string;
  scopes: Scope[];
  create_time: Date;
  revoke_time: Date | null;
}

export interface ResolvedKey extends KeyRow {
  env_name: string;
  env_mode: EnvMode;
}

const envColumns = ['id', 'name', 'mode', 'project_id', 'settings', 'create_time'] as const;
const keyColumns = ['id', 'env_id', 'kind', 'hint', 'scopes', 'create_time', 'revoke_time'] as const;

export function tenancyQueries(db: Db) {
  return {
    /** Stores one area's settings (`identity`, …) in envs.settings, leaving the other areas' keys alone. */
    async saveAreaSettings(envId: string, area: string, settings: unknown): Promise<void> {
      await db('envs')
        .where({ id: envId })
        .update({ settings: db.raw(`jsonb_set(settings, array[?], ?::jsonb)`, [area, JSON.stringify(settings)]) });
    },

    /** The environment's application database URL, sealed by the caller. */
    async setDatabaseUrl(envId: string, sealedUrl: string): Promise<void> {
      await db('envs').where({ id: envId }).update({ database_url_enc: sealedUrl });
    },

    /** Creates the org, project and env where missing (idempotent); answers the env and whether it is new. */
    async ensureEnv(path: EnvPath, mode: EnvMode): Promise<{ env: EnvRow; created: boolean }> {
      await db.raw('insert into orgs (id, slug) values (?, ?) on conflict (slug) do nothing', [newId('org'), path.org]);
      const org = await db('orgs').where({ slug: path.org }).first('id');
      await db.raw('insert into projects (id, org_id, slug) values (?, ?, ?) on conflict (org_id, slug) do nothing', [
        newId('proj'),
        org.id,
        path.project,
      ]);
      const project = await db('projects').where({ org_id: org.id, slug: path.project }).first('id');
      const inserted = await db.raw<{ rows: EnvRow[] }>(
        `insert into envs (id, project_id, slug, name, mode) values (?, ?, ?, ?, ?)
         on conflict (project_id, slug) do nothing returning ${envColumns.join(', ')}`,
        [newId('env'), project.id, path.env, envName(path), mode],
      );
      const row = inserted.rows[0];
      if (row) return { env: row, created: true };
      return {
        env: await db('envs')
          .where({ name: envName(path) })
          .first(envColumns),
        created: false,
      };
    },

    async envByName(name: string): Promise<EnvRow | undefined> {
      return db('envs').where({ name }).first(envColumns);
    },

    async envById(id: string): Promise<EnvRow | undefined> {
      return db('envs').where({ id }).first(envColumns);
    },

    async insertKey(row: {
      env_id: string;
      kind: KeyKind;
      token_hash: Buffer;
      hint: string;
      scopes: Scope[];
    }): Promise<KeyRow> {
      const [key] = await db('api_keys')
        .insert({ id: newId('key'), ...row })
        .returning(keyColumns);
      return key as KeyRow;
    },

    async listKeys(envId: string): Promise<KeyRow[]> {
      return db('api_keys').where({ env_id: envId }).orderBy('create_time', 'asc').select(keyColumns);
    },

    /** Revokes once; a second revoke answers the row as it is. */
    async revokeKey(id: string): Promise<KeyRow | undefined> {
      await db('api_keys').where({ id }).whereNull('revoke_time').update({ revoke_time: db.fn.now() });
      return db('api_keys').where({ id }).first(keyColumns);
    },

    async resolveKey(tokenHash: Buffer): Promise<ResolvedKey | undefined> {
      return db('api_keys as k')
        .join('envs as e', 'e.id', 'k.env_id')
        .where('k.token_hash', tokenHash)
        .first(...keyColumns.map((c) => `k.${c}`), 'e.name as env_name', 'e.mode as env_mode');
    },
  };
}

/**
 * Takes the environment's row lock, so that a count and an insert under it (a cap on the
 * environment's endpoints or keys) cannot be passed by a parallel one. `no key update` leaves the
 * environment's other writes (their foreign keys' key-share locks) free to go on.
 */
export async function lockEnv(db: Db, id: string, strength: 'update' | 'no key update'): Promise<void> {
  const q = db('envs').where({ id });
  await (strength === 'update' ? q.forUpdate() : q.forNoKeyUpdate()).first('id');
}
