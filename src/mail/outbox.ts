// The mail outbox (no SMTP_URL): bodies sealed with the service key, bound to the row's id, so a
// dump or backup of the database shows no link and a body copied to another row does not open;
// rows kept 7 days (the mail.prune job). Addressee and subject stay readable for support: neither
// holds a token.
import { open, seal, type Keyring } from '../crypto.ts';
import type { Db } from '../db.ts';
import { newId } from '../ids.ts';
import { outboxQueries, pruneOutbox, type OutboxRow } from './outbox-queries.ts';

export const outboxRetentionDays = 7;

const sealContext = (id: string): string => `mail_outbox:${id}`;

type OutboxMail = { to: string; subject: string; text: string };

/** Writes a mail to the outbox, its body sealed; answers its id. */
export async function storeOutboxMail(db: Db, keyring: Keyring, envId: string, mail: OutboxMail): Promise<string> {
  return (await storeOutboxMails(db, keyring, [{ envId, mail }]))[0]!;
}

/** Writes mails to the outbox in one statement, their bodies sealed; answers their ids in order. */
export async function storeOutboxMails(
  db: Db,
  keyring: Keyring,
  mails: readonly { envId: string; mail: OutboxMail }[],
): Promise<string[]> {
  const rows = mails.map(({ envId, mail }) => {
    const id = newId('mail');
    return {
      id,
      env_id: envId,
      to: mail.to,
      subject: mail.subject,
      body_sealed: seal(keyring, mail.text, sealContext(id)),
    };
  });
  if (rows.length > 0) await outboxQueries(db).insert(rows);
  return rows.map((r) => r.id);
}

/** Rows past their 7 days (the `mail.prune` job, hourly); answers how many went. */
export async function pruneMail(db: Db): Promise<number> {
  return pruneOutbox(db, outboxRetentionDays);
}

/** The body of a row, for an operator holding the service key. */
export function openOutboxBody(keyring: Keyring, row: Pick<OutboxRow, 'id' | 'body_sealed'>): string {
  return open(keyring, row.body_sealed, sealContext(row.id)).toString('utf8');
}
