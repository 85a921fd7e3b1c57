// One-use sign-in tickets (server mode): redeemed by a single conditional UPDATE, so of N
// concurrent redeemers exactly one wins.
import type { Db } from '../../../db.ts';

export interface TicketRow {
  env_id: string;
  end_user_id: string;
  method: string;
  ip: string | null;
  user_agent: string | null;
}

export function ticketQueries(db: Db) {
  return {
    /**
     * Removes the user's tickets not yet redeemed. A delete, not an earlier expiry: a redeem
     * waiting on the row's lock then finds nothing, whereas an expiry time compared with the
     * redeem's own (earlier) transaction time could still pass.
     */
    async deleteOutstandingTickets(endUserId: string): Promise<number> {
      return db('end_user_tickets').where({ end_user_id: endUserId }).whereNull('redeem_time').delete();
    },

    /** A new ticket, unless the user is locked (or gone): then undefined (users/lock.ts). */
    async insertTicket(row: TicketRow & { token_hash: Buffer; lifetime_seconds: number }): Promise<Date | undefined> {
      const inserted = await db.raw<{ rows: { expire_time: Date }[] }>(
        `insert into end_user_tickets (token_hash, env_id, end_user_id, method, ip, user_agent, expire_time)
         select ?::bytea, u.env_id, u.id, ?, ?, ?, now() + make_interval(secs => ?)
           from end_users u where u.id = ? and u.env_id = ? and u.locked_time is null
            for share
         returning expire_time`,
        [row.token_hash, row.method, row.ip, row.user_agent, row.lifetime_seconds, row.end_user_id, row.env_id],
      );
      return inserted.rows[0]?.expire_time;
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
  };
}

/** Tickets a day after they expired. */
export async function pruneTickets(db: Db): Promise<number> {
  return db('end_user_tickets')
    .where('expire_time', '<', db.raw(`now() - make_interval(days => ?)`, [1]))
    .delete();
}
