// The mail outbox (no SMTP_URL): bodies sealed with the service key, bound to the row's id, so a
// dump or backup of the database shows no link and a body copied to another row does not open;
// rows kept 7 days (the mail.prune job). Addressee and subject stay readable for support: neither
// holds a token.
import type { Knex } from 'knex';
import { open, seal, type Keyring } from '../crypto.ts';
import { newId } from '../ids.ts';

export const outboxRetentionDays = 7;

const sealContext = (id: string): string => `mail_outbox:${id}`;

export interface OutboxRow {
  id: string;
  env_id: string | null;
  to: string;
  subject: string;
  body_sealed: string;
  create_time: Date;
}

export function outboxQueries(db: Knex) {
  return {
    async insert(
      keyring: Keyring,
      envId: string,
      mail: { to: string; subject: string; text: string },
    ): Promise<string> {
      const id = newId('mail');
      await db('mail_outbox').insert({
        id,
        env_id: envId,
        to: mail.to,
        subject: mail.subject,
        body_sealed: seal(keyring, mail.text, sealContext(id)),
      });
      return id;
    },

    /** An environment's mails, newest first. */
    async list(envId: string, limit: number): Promise<OutboxRow[]> {
      return db<OutboxRow>('mail_outbox').where({ env_id: envId }).orderBy('create_time', 'desc').limit(limit);
    },

    async get(envId: string, id: string): Promise<OutboxRow | undefined> {
      return db<OutboxRow>('mail_outbox').where({ env_id: envId, id }).first();
    },

    /** Rows older than the retention; answers how many went. */
    async prune(days: number = outboxRetentionDays): Promise<number> {
      return db('mail_outbox')
        .where('create_time', '<', db.raw('now() - make_interval(days => ?)', [days]))
        .delete();
    },
  };
}

/** The body of a row, for an operator holding the service key. */
export function openOutboxBody(keyring: Keyring, row: Pick<OutboxRow, 'id' | 'body_sealed'>): string {
  return open(keyring, row.body_sealed, sealContext(row.id)).toString('utf8');
}
