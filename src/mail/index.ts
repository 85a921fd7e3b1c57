// Outgoing mail. With SMTP_URL, nodemailer sends it; without, it lands in the `mail_outbox` table
// (docs/api.md "Configuration"), its body sealed (outbox.ts), so development needs no mail server.
// Links in mail carry one-use tokens: the log shows the body only for a test environment, where
// the log is how a developer without SMTP follows them; a live environment's never.
import type { Knex } from 'knex';
import nodemailer, { type Transporter } from 'nodemailer';
import { settleAtMost } from '../at-most.ts';
import type { Config } from '../config.ts';
import { keyringFromConfig } from '../crypto.ts';
import type { Logger } from '../log.ts';
import { storeOutboxMail, storeOutboxMails } from './outbox.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
  /** An HTML alternative of `text`, already escaped by its maker; the outbox keeps only the text. */
  html?: string;
}

/** The environment a mail is sent for: its mode decides what the log may show. */
export interface MailEnv {
  envId: string;
  mode: 'test' | 'live';
}

export interface Mailer {
  readonly kind: 'smtp' | 'outbox';
  send(mail: Mail, env: MailEnv): Promise<void>;
  /**
   * Sends several, each on its own: answers, in order, undefined for a mail sent and the error of
   * one that was not. The outbox writes them in one statement (all or none).
   */
  sendAll(mails: readonly { mail: Mail; env: MailEnv }[]): Promise<(Error | undefined)[]>;
}

/** Mails an SMTP server is given at once (each its own connection: the transport is not pooled). */
const smtpAtOnce = 8;

/** sendAll over `send`, each mail on its own, `smtpAtOnce` at a time. */
const eachAlone =
  (send: Mailer['send']): Mailer['sendAll'] =>
  async (mails) =>
    (await settleAtMost(smtpAtOnce, mails, (m) => send(m.mail, m.env))).map((r) =>
      r.status === 'fulfilled' ? undefined : (r.reason as Error),
    );

const transports = new Map<string, Transporter>();

export function createMailer(
  config: Pick<Config, 'SMTP_URL' | 'CAIRN_MAIL_FROM' | 'CAIRN_ENCRYPTION_KEY_ID' | 'encryptionKeys'>,
  db: Knex,
  log: Logger,
): Mailer {
  const url = config.SMTP_URL;
  if (url) {
    let transport = transports.get(url);
    if (!transport) transports.set(url, (transport = nodemailer.createTransport(url)));
    const smtp = transport;
    const send: Mailer['send'] = async (mail) => {
      await smtp.sendMail({
        from: config.CAIRN_MAIL_FROM,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.html === undefined ? {} : { html: mail.html }),
      });
      log.info({ subject: mail.subject }, 'mail sent');
    };
    return { kind: 'smtp', send, sendAll: eachAlone(send) };
  }
  const keyring = keyringFromConfig(config);
  const written = (id: string, mail: Mail, env: MailEnv) => {
    if (env.mode === 'test')
      log.info(
        { mail_id: id, to: mail.to, subject: mail.subject, text: mail.text },
        'mail written to the outbox (no SMTP_URL)',
      );
    else
      log.warn(
        { mail_id: id, subject: mail.subject },
        'mail for a live environment kept sealed in the outbox, not delivered: set SMTP_URL',
      );
  };
  return {
    kind: 'outbox',
    async send(mail, env) {
      written(await storeOutboxMail(db, keyring, env.envId, mail), mail, env);
    },
    async sendAll(mails) {
      const ids = await storeOutboxMails(
        db,
        keyring,
        mails.map((m) => ({ envId: m.env.envId, mail: m.mail })),
      );
      mails.forEach((m, i) => written(ids[i]!, m.mail, m.env));
      return mails.map(() => undefined);
    },
  };
}
