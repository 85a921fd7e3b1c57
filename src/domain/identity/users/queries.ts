// End users and their sign-in history. Every query names its environment or a user id already
// resolved within one; values are bound.
import type { Db } from '../../../db.ts';
import { newId } from '../../../ids.ts';
import { likeLiteral } from '../../errors/search/queries.ts';

export interface EndUserRow {
  id: string;
  env_id: string;
  email: string;
  email_normalized: string;
  password_hash: string | null;
  email_verified_time: Date | null;
  last_sign_in_time: Date | null;
  create_time: Date;
  update_time: Date;
  /** Set while the operator has locked the user: no sign-in of any kind (users.ts lockEndUser). */
  locked_time: Date | null;
  totp_active: boolean;
}

export interface SignInRow {
  id: string;
  end_user_id: string;
  time: Date;
  method: string;
  outcome: string;
  ip: string | null;
  user_agent: string | null;
}

/** Which users a list shows: an exact normalised address, or a part of one (either case). */
export interface UserFilter {
  email?: string | undefined;
  emailContains?: string | undefined;
}

export interface Page {
  /** At most this many rows (the page and one more, to learn whether another follows). */
  limit: number;
  /** Rows with ids below this one (ids are ULIDs, so newest first). */
  before?: string;
}

/** Users with whether a TOTP factor is active, without a second round trip. */
function users(db: Db) {
  return db('end_users as u').select(
    'u.*',
    db.raw(
      'exists (select 1 from end_user_totp_factors f where f.end_user_id = u.id and f.activate_time is not null) as totp_active',
    ),
  );
}

/**
 * `emailContains`: a substring of the normalised (lower-cased) address, its LIKE wildcards escaped
 * so `_`, `%` and `\` match themselves. The trigram index end_users_email_trgm serves it from
 * three characters on; shorter parts scan the environment's users, newest first, a page at a time.
 */
const containsSql = (part: string): [string, string[]] => [
  `u.email_normalized like ? escape '\\'`,
  [`%${likeLiteral(part)}%`],
];

/** Sets or clears the operator's lock (lock.ts); false when the user is not in this environment. */
export async function setUserLocked(db: Db, envId: string, id: string, locked: boolean): Promise<boolean> {
  const n = await db('end_users')
    .where({ env_id: envId, id })
    .update({ locked_time: locked ? db.raw('coalesce(locked_time, now())') : null, update_time: db.fn.now() });
  return n > 0;
}

export function usersQueries(db: Db) {
  return {
    async insertUser(row: {
      env_id: string;
      email: string;
      email_normalized: string;
      password_hash: string | null;
      email_verified: boolean;
    }): Promise<EndUserRow | undefined> {
      const { email_verified, ...rest } = row;
      const inserted = await db.raw<{ rows: { id: string }[] }>(
        `insert into end_users (id, env_id, email, email_normalized, password_hash, email_verified_time)
         values (?, ?, ?, ?, ?, ${email_verified ? 'now()' : 'null'})
         on conflict (env_id, email_normalized) do nothing returning id`,
        [newId('eu'), rest.env_id, rest.email, rest.email_normalized, rest.password_hash],
      );
      const id = inserted.rows[0]?.id;
      return id ? this.userById(rest.env_id, id) : undefined;
    },

    async userById(envId: string, id: string): Promise<EndUserRow | undefined> {
      return users(db).where({ 'u.env_id': envId, 'u.id': id }).first();
    },

    async userByEmail(envId: string, emailNormalized: string): Promise<EndUserRow | undefined> {
      return users(db).where({ 'u.env_id': envId, 'u.email_normalized': emailNormalized }).first();
    },

    async listUsers(envId: string, page: Page, filter: UserFilter = {}): Promise<EndUserRow[]> {
      const q = users(db).where('u.env_id', envId).orderBy('u.id', 'desc').limit(page.limit);
      if (filter.email) q.where('u.email_normalized', filter.email);
      if (filter.emailContains) q.whereRaw(...containsSql(filter.emailContains));
      if (page.before) q.where('u.id', '<', page.before);
      return q;
    },

    /** Sessions, tickets, links and factors go with the row (ON DELETE CASCADE): revocation is at once. */
    async deleteUser(envId: string, id: string): Promise<boolean> {
      return (await db('end_users').where({ env_id: envId, id }).delete()) > 0;
    },

    async setPasswordHash(id: string, hash: string): Promise<void> {
      await db('end_users').where({ id }).update({ password_hash: hash, update_time: db.fn.now() });
    },

    async markEmailVerified(id: string): Promise<void> {
      await db('end_users')
        .where({ id })
        .whereNull('email_verified_time')
        .update({ email_verified_time: db.fn.now(), update_time: db.fn.now() });
    },

    /** A history row; a success also stamps the user's last_sign_in_time, in the same statement. */
    async insertSignIn(row: Omit<SignInRow, 'id' | 'time'> & { env_id: string }): Promise<void> {
      await db.raw(
        `with h as (insert into end_user_sign_ins (id, env_id, end_user_id, method, outcome, ip, user_agent) values (?, ?, ?, ?, ?, ?, ?))
         update end_users set last_sign_in_time = now() where id = ? and ? = 'succeeded'`,
        [
          newId('si'),
          row.env_id,
          row.end_user_id,
          row.method,
          row.outcome,
          row.ip,
          row.user_agent,
          row.end_user_id,
          row.outcome,
        ],
      );
    },

    async listSignIns(endUserId: string, page: Page): Promise<SignInRow[]> {
      const q = db('end_user_sign_ins').where({ end_user_id: endUserId }).orderBy('id', 'desc').limit(page.limit);
      if (page.before) q.where('id', '<', page.before);
      return q.select('id', 'end_user_id', 'time', 'method', 'outcome', 'ip', 'user_agent');
    },
  };
}

/** Sign-in history is kept 90 days (the daily identity.prune). */
export async function pruneSignIns(db: Db): Promise<number> {
  return db('end_user_sign_ins')
    .where('time', '<', db.raw(`now() - make_interval(days => ?)`, [90]))
    .delete();
}
