// SQL for the console's sessions and sign-in links (migrations/20261127100000, 20261202150000).
// Tokens are looked up by their SHA-256; a session is live while it has not ended or expired and its
// key (if any) is not revoked, so revoking the key ends every console session opened with it at once.
import type { Knex } from 'knex';
import type { Db } from '../../db.ts';
import type { SecretScope } from '../tenancy/keys.ts';

export type OpenedBy = 'link' | 'key';

export interface ConsoleSessionRow {
  id: string;
  env_id: string;
  env_name: string;
  key_id: string | null;
  /** The key's scopes; null for a session opened by an operator's link (every scope). */
  key_scopes: SecretScope[] | null;
  /** Its last use was over a minute ago: the page stamps it (touchSession). */
  stale: boolean;
}

/** A session as `cairn admin console-sessions list` shows it: never its token. */
export interface ConsoleSessionListRow {
  id: string;
  key_id: string | null;
  opened_by: OpenedBy;
  create_time: Date;
  last_use_time: Date;
  expire_time: Date;
}

export interface ConsoleLinkState {
  env_name: string;
  usable: boolean;
}

/** Not ended, not expired, and its key (if any) not revoked. */
const live = (db: Db) => (q: Knex.QueryBuilder) =>
  q
    .whereNull('s.end_time')
    .where('s.expire_time', '>', db.fn.now())
    .where((k) => k.whereNull('s.key_id').orWhereNull('k.revoke_time'));

/** Last use is stamped at most once a minute, so reading a page is not a write each time. */
const touchEverySeconds = 60;

/** A browser's console session: opened, looked up by its token (and stamped), ended. */
export function consoleSessionQueries(db: Db) {
  return {
    async insertSession(row: {
      id: string;
      token_hash: Buffer;
      env_id: string;
      key_id: string | null;
      opened_by: OpenedBy;
      create_time: Date;
      last_use_time: Date;
      expire_time: Date;
    }): Promise<void> {
      await db('console_sessions').insert(row);
    },

    async liveSession(tokenHash: Buffer): Promise<ConsoleSessionRow | undefined> {
      return db('console_sessions as s')
        .join('envs as e', 'e.id', 's.env_id')
        .leftJoin('api_keys as k', 'k.id', 's.key_id')
        .where('s.token_hash', tokenHash)
        .modify(live(db))
        .first(
          's.id',
          's.env_id',
          'e.name as env_name',
          's.key_id',
          'k.scopes as key_scopes',
          db.raw(`s.last_use_time < now() - make_interval(secs => ?) as stale`, [touchEverySeconds]),
        );
    },

    async touchSession(id: string): Promise<void> {
      await db('console_sessions').where({ id }).update({ last_use_time: db.fn.now() });
    },

    async endSession(tokenHash: Buffer): Promise<void> {
      await db('console_sessions')
        .where({ token_hash: tokenHash })
        .whereNull('end_time')
        .update({ end_time: db.fn.now() });
    },
  };
}

/** An environment's live sessions, as an operator lists and ends them from outside the browser. */
export function consoleSessionListQueries(db: Db) {
  return {
    async listSessions(envId: string): Promise<ConsoleSessionListRow[]> {
      return db('console_sessions as s')
        .leftJoin('api_keys as k', 'k.id', 's.key_id')
        .where('s.env_id', envId)
        .modify(live(db))
        .orderBy([{ column: 's.last_use_time', order: 'desc' }, 's.id'])
        .select('s.id', 's.key_id', 's.opened_by', 's.create_time', 's.last_use_time', 's.expire_time');
    },

    /** Ends the environment's live sessions (one by id, or all); answers the ids it ended. */
    async endSessions(envId: string, id?: string): Promise<string[]> {
      const liveIds = db('console_sessions as s')
        .leftJoin('api_keys as k', 'k.id', 's.key_id')
        .where('s.env_id', envId)
        .modify(live(db))
        .modify((q) => (id ? q.where('s.id', id) : q))
        .select('s.id');
      const rows: { id: string }[] = await db('console_sessions')
        .whereIn('id', liveIds)
        .whereNull('end_time')
        .update({ end_time: db.fn.now() })
        .returning('id');
      return rows.map((r) => r.id).sort();
    },
  };
}

/** One-use sign-in links: made, shown without being used, and used once. */
export function consoleLinkQueries(db: Db) {
  return {
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
     * A link as its page shows it, without using it: the environment it is for, and whether it
     * would still open a session (unused, unexpired, its key not revoked).
     */
    async linkState(tokenHash: Buffer): Promise<ConsoleLinkState | undefined> {
      return db('console_links as l')
        .join('envs as e', 'e.id', 'l.env_id')
        .leftJoin('api_keys as k', 'k.id', 'l.key_id')
        .where('l.token_hash', tokenHash)
        .first(
          'e.name as env_name',
          db.raw(
            `(l.use_time is null and l.expire_time > now() and (l.key_id is null or k.revoke_time is null)) as usable`,
          ),
        );
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
  };
}

/** The console's sessions a week after they ended, and its sign-in links a day after they expired. */
export async function pruneConsole(db: Db): Promise<{ console_sessions: number; console_links: number }> {
  const ago = (days: number) => db.raw(`now() - make_interval(days => ?)`, [days]);
  return {
    console_sessions: await db('console_sessions')
      .where('expire_time', '<', ago(7))
      .orWhere('end_time', '<', ago(7))
      .delete(),
    console_links: await db('console_links').where('expire_time', '<', ago(1)).delete(),
  };
}
