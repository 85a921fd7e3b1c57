// Mail outbox, secrets at rest. Without SMTP_URL every mail lands in `mail_outbox`, and its body
// held verification and reset links (one-use tokens) in plaintext, kept for ever. From here the
// body is `body_sealed`: AES-256-GCM with the service key, bound to the row's id (src/mail/
// outbox.ts), and rows go after 7 days (the mail.prune job).
//
// Existing rows are dropped, not sealed. Their tokens have sat in plaintext in every dump and
// backup of this database taken since they were written, so sealing the rows now would keep
// exposed tokens working; instead the links they carry are spent first (marked used, found by the
// SHA-256 the token table keys on), and the rows deleted. Nothing is lost that matters: a
// verification link is sent again when the address signs up again, a reset when it is asked
// again, and the other mails (already registered, breached password) carry no link. Sealing would
// also need the service key and the sealing code, which a migration must not import from src/.
//
// `down` gives the previous shape back, with no rows: the sealed bodies cannot be opened here.
import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    update end_user_email_tokens set use_time = now()
     where use_time is null
       and token_hash in (
         select sha256(convert_to(m[1], 'UTF8'))
           from mail_outbox o, regexp_matches(o.text, '(cairn_eml_[0-9A-Za-z]{32})', 'g') as m
       )`);
  await knex('mail_outbox').delete();
  await knex.schema.alterTable('mail_outbox', (t) => {
    t.dropColumn('text');
    t.text('body_sealed').notNullable();
    t.index(['create_time']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex('mail_outbox').delete();
  await knex.schema.alterTable('mail_outbox', (t) => {
    t.dropIndex(['create_time']);
    t.dropColumn('body_sealed');
    t.text('text').notNullable();
  });
}
