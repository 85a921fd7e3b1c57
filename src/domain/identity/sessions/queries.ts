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

export function sessionQueries(db: Db) {
  return {
    async insertSession(
      row: Omit<SessionRow, 'create_time' | 'last_active_time' | 'idle_expire_time' | 'expire_time' | 'revoke_time'> & {
        token_hash: Buffer;
        lifetime_seconds: number;
      },
    ): Promise<SessionRow> {
      const { lifetime_seconds, ...rest } = row;
      const [session] = await db('end_user_sessions')
        .insert({
          ...rest,
          idle_expire_time: db.raw(`now() + make_interval(secs => ?)`, [Math.min(row.idle_seconds, lifetime_seconds)]),
          expire_time: db.raw(`now() + make_interval(secs => ?)`, [lifetime_seconds]),
        })
        .returning(sessionColumns);
      return session as SessionRow;
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
