// SQL for end users, sessions, tickets, emailed links, factors, history and lockout counters.
// Every query names its environment or a user id already resolved within one; values are bound.
// Redeem-style writes are single conditional UPDATEs, so of N concurrent callers exactly one wins.
import type { Db } from '../../db.ts';
import { newId } from '../../ids.ts';

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
  totp_active: boolean;
}

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

export interface SignInRow {
  id: string;
  end_user_id: string;
  time: Date;
  method: string;
  outcome: string;
  ip: string | null;
  user_agent: string | null;
}

export interface TicketRow {
  env_id: string;
  end_user_id: string;
  method: string;
  ip: string | null;
  user_agent: string | null;
}

export interface FactorRow {
  id: string;
  end_user_id: string;
  secret_sealed: string;
  activate_time: Date | null;
  last_step: string | null;
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

/** Users with whether a TOTP factor is active, without a second round trip. */
function users(db: Db) {
  return db('end_users as u').select(
    'u.*',
    db.raw(
      'exists (select 1 from end_user_totp_factors f where f.end_user_id = u.id and f.activate_time is not null) as totp_active',
    ),
  );
}

export interface Page {
  pageSize: number;
  /** Rows with ids below this one (ids are ULIDs, so newest first). */
  before?: string;
}

export function identityQueries(db: Db) {
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

    async listUsers(envId: string, page: Page, email?: string): Promise<EndUserRow[]> {
      const q = users(db)
        .where('u.env_id', envId)
        .orderBy('u.id', 'desc')
        .limit(page.pageSize + 1);
      if (email) q.where('u.email_normalized', email);
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

    /**
     * Removes the user's tickets not yet redeemed. A delete, not an earlier expiry: a redeem
     * waiting on the row's lock then finds nothing, whereas an expiry time compared with the
     * redeem's own (earlier) transaction time could still pass.
     */
    async deleteOutstandingTickets(endUserId: string): Promise<number> {
      return db('end_user_tickets').where({ end_user_id: endUserId }).whereNull('redeem_time').delete();
    },

    /** Spends the user's unused links of one purpose (after a reset, older reset links are void). */
    async spendEmailTokens(endUserId: string, purpose: 'verify_email' | 'reset_password'): Promise<void> {
      await db('end_user_email_tokens')
        .where({ end_user_id: endUserId, purpose })
        .whereNull('use_time')
        .update({ use_time: db.fn.now() });
    },

    async listSessions(endUserId: string, page: Page): Promise<SessionRow[]> {
      const q = db('end_user_sessions')
        .where({ end_user_id: endUserId })
        .orderBy('id', 'desc')
        .limit(page.pageSize + 1);
      if (page.before) q.where('id', '<', page.before);
      return q.select(sessionColumns);
    },

    async insertTicket(row: TicketRow & { token_hash: Buffer; lifetime_seconds: number }): Promise<Date> {
      const { lifetime_seconds, ...rest } = row;
      const [t] = await db('end_user_tickets')
        .insert({ ...rest, expire_time: db.raw('now() + make_interval(secs => ?)', [lifetime_seconds]) })
        .returning('expire_time');
      return (t as { expire_time: Date }).expire_time;
    },

    /** One conditional UPDATE: unknown, expired and used tickets all answer nothing. */
    async redeemTicket(envId: string, tokenHash: Buffer): Promise<TicketRow | undefined> {
      const rows = await db('end_user_tickets')
        .where({ token_hash: tokenHash, env_id: envId })
        .whereNull('redeem_time')
        .where('expire_time', '>', db.fn.now())
        .update({ redeem_time: db.fn.now() })
        .returning(['env_id', 'end_user_id', 'method', 'ip', 'user_agent']);
      return rows[0] as TicketRow | undefined;
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
      const q = db('end_user_sign_ins')
        .where({ end_user_id: endUserId })
        .orderBy('id', 'desc')
        .limit(page.pageSize + 1);
      if (page.before) q.where('id', '<', page.before);
      return q.select('id', 'end_user_id', 'time', 'method', 'outcome', 'ip', 'user_agent');
    },

    /** Consecutive failures counted so far, and seconds left of a lockout (0 = not locked). */
    /**
     * Reserves one check of the identifier, in a single statement, before any password is hashed:
     * `pending` goes up at once, so concurrent requests across web processes each see the ones
     * before them. Refused (`reserved: false`) while locked, or while failed and pending checks
     * already make the threshold. A lock that has run out starts a fresh count; reservations
     * older than a minute (a process that died mid-check) are dropped. Answers whether this check
     * may run and, if not, for how long to wait.
     */
    async reserveAttempt(
      envId: string,
      identifierHash: Buffer,
      threshold: number,
      lockSeconds: number,
    ): Promise<{ reserved: boolean; waitSeconds: number }> {
      // One statement: the row is locked (FOR UPDATE waits for a concurrent reservation and then
      // reads what it left), the decision taken on it and written back. Concurrent reservations
      // of one identifier thus queue on the row, each deciding on the count the one before left.
      const reserve = () =>
        db.raw<{ rows: { reserved: boolean; failures: number; locked_seconds: number }[] }>(
          `with old as (
           select case when locked_until is not null and locked_until <= now() then 0 else failures end as failures,
                  case when update_time < now() - interval '1 minute' then 0 else pending end as pending,
                  case when locked_until > now() then locked_until end as locked_until
             from identity_lockouts where env_id = ? and identifier_hash = ? for update
         ), decided as (
           select failures, pending, locked_until, locked_until is null and failures + pending < ? as reserved from old
         ), written as (
           update identity_lockouts l
              set failures = d.failures, pending = d.pending + d.reserved::int, locked_until = d.locked_until, update_time = now()
             from decided d where l.env_id = ? and l.identifier_hash = ?
           returning 1
         )
         select reserved, failures, coalesce(ceil(extract(epoch from locked_until - now()))::int, 0) as locked_seconds,
                (select count(*) from written) as written
           from decided`,
          [envId, identifierHash, threshold, envId, identifierHash],
        );
      let result = await reserve();
      // The identifier's first check: make its row, then reserve on it (rows are reset, not
      // deleted, on success; only the daily prune deletes idle ones).
      for (let attempt = 0; result.rows.length === 0 && attempt < 3; attempt++) {
        await db('identity_lockouts')
          .insert({ env_id: envId, identifier_hash: identifierHash, failures: 0, pending: 0 })
          .onConflict(['env_id', 'identifier_hash'])
          .ignore();
        result = await reserve();
      }
      const row = result.rows[0];
      if (!row) throw new Error('the lockout row of this identifier could not be reserved');
      if (row.reserved) return { reserved: true, waitSeconds: 0 };
      // Refused for checks still in flight rather than failures: they end within a second or
      // two, and then the identifier is either locked or free again.
      return {
        reserved: false,
        waitSeconds: row.locked_seconds > 0 ? row.locked_seconds : row.failures >= threshold ? lockSeconds : 2,
      };
    },

    /** A reserved check failed: it counts; reaching the threshold locks the identifier. Answers the seconds locked (0 = not). */
    async failReserved(envId: string, identifierHash: Buffer, threshold: number, lockSeconds: number): Promise<number> {
      const result = await db.raw<{ rows: { seconds: number }[] }>(
        `update identity_lockouts set
           pending = greatest(pending - 1, 0),
           failures = failures + 1,
           locked_until = coalesce(locked_until, case when failures + 1 >= ? then now() + make_interval(secs => ?) end),
           update_time = now()
         where env_id = ? and identifier_hash = ?
         returning coalesce(ceil(extract(epoch from locked_until - now()))::int, 0) as seconds`,
        [threshold, lockSeconds, envId, identifierHash],
      );
      return Math.max(0, result.rows[0]?.seconds ?? 0);
    },

    /** A reserved check that was neither a failure nor a sign-in (the password right, a factor or verification still due): not counted. */
    async releaseReserved(envId: string, identifierHash: Buffer): Promise<void> {
      await db('identity_lockouts')
        .where({ env_id: envId, identifier_hash: identifierHash })
        .update({ pending: db.raw('greatest(pending - 1, 0)'), update_time: db.fn.now() });
    },

    /** A success: the count starts afresh and its own reservation is given back. Reset, not deleted, so a concurrent reservation always finds the row it locks. */
    async clearFailures(envId: string, identifierHash: Buffer): Promise<void> {
      await db('identity_lockouts')
        .where({ env_id: envId, identifier_hash: identifierHash })
        .update({
          failures: 0,
          pending: db.raw('greatest(pending - 1, 0)'),
          locked_until: null,
          update_time: db.fn.now(),
        });
    },
  };
}

export type IdentityQueries = ReturnType<typeof identityQueries>;
