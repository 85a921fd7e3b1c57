// SQL for the console's sessions and sign-in links (migrations/20261127100000). Tokens are looked
// up by their SHA-256; a session is live while it has not ended or expired and its key (if any) is
// not revoked, so revoking the key ends every console session opened with it at once.
import type { Db } from '../../db.ts';
import type { SecretScope } from '../tenancy/keys.ts';

export interface ConsoleSessionRow {
  id: string;
  env_id: string;
  env_name: string;
  key_id: string | null;
  /** The key's scopes; null for a session opened by an operator's link (every scope). */
  key_scopes: SecretScope[] | null;
}

export function consoleQueries(db: Db) {
  return {
    async insertSession(row: {
      id: string;
      token_hash: Buffer;
      env_id: string;
      key_id: string | null;
      expire_time: Date;
    }): Promise<void> {
      await db('console_sessions').insert(row);
    },

    async liveSession(tokenHash: Buffer): Promise<ConsoleSessionRow | undefined> {
      return db('console_sessions as s')
        .join('envs as e', 'e.id', 's.env_id')
        .leftJoin('api_keys as k', 'k.id', 's.key_id')
        .where('s.token_hash', tokenHash)
        .whereNull('s.end_time')
        .where('s.expire_time', '>', db.fn.now())
        .where((q) => q.whereNull('s.key_id').orWhereNull('k.revoke_time'))
        .first('s.id', 's.env_id', 'e.name as env_name', 's.key_id', 'k.scopes as key_scopes');
    },

    async insertLink(row: {
      id: string;
      token_hash: Buffer;
      env_id: string;
      key_id: string | null;
      expire_time: Date;
    }): Promise<void> {
      await db('console_links').insert(row);
    },

    /**
     * Uses a link: unused, unexpired, and its key (if any) not revoked; stamped used in the same
     * statement, so of concurrent uses exactly one gets the row. Answers what it opens.
     */
    async useLink(tokenHash: Buffer): Promise<{ env_id: string; key_id: string | null } | undefined> {
      const { rows } = await db.raw<{ rows: { env_id: string; key_id: string | null }[] }>(
        `update console_links l set use_time = now()
          where l.token_hash = ? and l.use_time is null and l.expire_time > now()
            and (l.key_id is null or exists (select 1 from api_keys k where k.id = l.key_id and k.revoke_time is null))
          returning l.env_id, l.key_id`,
        [tokenHash],
      );
      return rows[0];
    },

    async endSession(tokenHash: Buffer): Promise<void> {
      await db('console_sessions')
        .where({ token_hash: tokenHash })
        .whereNull('end_time')
        .update({ end_time: db.fn.now() });
    },
  };
}
