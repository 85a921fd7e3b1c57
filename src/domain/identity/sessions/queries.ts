// End users' sessions: created at sign-in, touched while used, revoked singly or all at once.
import type { Db } from '../../../db.ts';
import type { Page } from '../users/queries.ts';

export interface SessionRow {
  id: string;
  env_id: string;
  end_user_id: string;
  method: string;
  ip: string | null;
  user_agent: string | null;
  create_time: Date;
  last_active_time: Date;
  idle_seconds: number;
  idle_expire_time: Date;
  expire_time: Date;
  revoke_time: Date | null;
}

const sessionColumns = [
  'id',
  'env_id',
  'end_user_id',
  'method',
  'ip',
  'user_agent',
  'create_time',
  'last_active_time',
  'idle_seconds',
  'idle_expire_time',
  'expire_time',
  'revoke_time',
] as const;

const insertSessionSql = `insert into end_user_sessions
    (id, env_id, end_user_id, method, ip, user_agent, token_hash, idle_seconds, idle_expire_time, expire_time)
  select ?, u.env_id, u.id, ?, ?, ?, ?::bytea, ?::int,
         now() + make_interval(secs => ?), now() + make_interval(secs => ?)
    from end_users u where u.id = ? and u.env_id = ? and u.locked_time is null
     for share
  returning ${sessionColumns.join(', ')}`;

export function sessionQueries(db: Db) {
  return {
    /**
     * A new session, unless the user is locked (or gone): then undefined. The user's row is read
     * FOR SHARE, so a lock committing meanwhile either waits for this insert (and its revoke then
     * sees the session) or is seen by it (users/lock.ts).
     */
    async insertSession(
      row: Omit<SessionRow, 'create_time' | 'last_active_time' | 'idle_expire_time' | 'expire_time' | 'revoke_time'> & {
        token_hash: Buffer;
        lifetime_seconds: number;
      },
    ): Promise<SessionRow | undefined> {
      const inserted = await db.raw<{ rows: SessionRow[] }>(insertSessionSql, [
        row.id,
        row.method,
        row.ip,
        row.user_agent,
        row.token_hash,
        row.idle_seconds,
        Math.min(row.idle_seconds, row.lifetime_seconds),
        row.lifetime_seconds,
        row.end_user_id,
        row.env_id,
      ]);
      return inserted.rows[0];
    },

    /** A live session by token hash: not revoked, within both its idle and absolute lifetimes. */
    async liveSession(tokenHash: Buffer): Promise<SessionRow | undefined> {
      return db('end_user_sessions')
        .where({ token_hash: tokenHash })
        .whereNull('revoke_time')
        .where('expire_time', '>', db.fn.now())
        .where('idle_expire_time', '>', db.fn.now())
        .first(sessionColumns);
    },

    /** Slides the idle deadline, never past the absolute one. */
    async touchSession(id: string): Promise<void> {
      await db('end_user_sessions')
        .where({ id })
        .update({
          last_active_time: db.fn.now(),
          idle_expire_time: db.raw('least(now() + make_interval(secs => idle_seconds), expire_time)'),
        });
    },

    async revokeSession(id: string): Promise<void> {
      await db('end_user_sessions').where({ id }).whereNull('revoke_time').update({ revoke_time: db.fn.now() });
    },

    /** Revokes one session of the user (one already revoked keeps its time); undefined when it has none such. */
    async revokeUserSession(endUserId: string, id: string): Promise<SessionRow | undefined> {
      const rows = await db('end_user_sessions')
        .where({ id, end_user_id: endUserId })
        .update({ revoke_time: db.raw('coalesce(revoke_time, now())') })
        .returning(sessionColumns);
      return rows[0] as SessionRow | undefined;
    },

    async revokeUserSessions(endUserId: string): Promise<number> {
      return db('end_user_sessions')
        .where({ end_user_id: endUserId })
        .whereNull('revoke_time')
        .update({ revoke_time: db.fn.now() });
    },

    async listSessions(endUserId: string, page: Page): Promise<SessionRow[]> {
      const q = db('end_user_sessions').where({ end_user_id: endUserId }).orderBy('id', 'desc').limit(page.limit);
      if (page.before) q.where('id', '<', page.before);
      return q.select(sessionColumns);
    },
  };
}

/** Sessions a week after they expired or were revoked, so support can still see a recent sign-out. */
export async function pruneSessions(db: Db): Promise<number> {
  const weekAgo = db.raw(`now() - make_interval(days => ?)`, [7]);
  return db('end_user_sessions')
    .where('expire_time', '<', weekAgo)
    .orWhere('revoke_time', '<', weekAgo)
    .orWhere('idle_expire_time', '<', weekAgo)
    .delete();
}
