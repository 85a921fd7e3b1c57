// Outgoing mail. With SMTP_URL, nodemailer sends it; without, it lands in the `mail_outbox` table
// and the log, so development needs no mail server (CONTRACT.md "Configuration"). Links in mail
// carry one-use tokens: the log shows the body only outside production.
import type { Knex } from 'knex';
import nodemailer, { type Transporter } from 'nodemailer';
import type { Config } from '../config.ts';
import { newId } from '../ids.ts';
import type { Logger } from '../log.ts';

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  readonly kind: 'smtp' | 'outbox';
  send(mail: Mail): Promise<void>;
}

const transports = new Map<string, Transporter>();

export function createMailer(config: Pick<Config, 'SMTP_URL' | 'CAIRN_MAIL_FROM' | 'NODE_ENV'>, db: Knex, log: Logger): Mailer {
  const url = config.SMTP_URL;
  if (url) {
    let transport = transports.get(url);
    if (!transport) transports.set(url, (transport = nodemailer.createTransport(url)));
    const smtp = transport;
    return {
      kind: 'smtp',
      async send(mail) {
        await smtp.sendMail({ from: config.CAIRN_MAIL_FROM, to: mail.to, subject: mail.subject, text: mail.text });
        log.info({ subject: mail.subject }, 'mail sent');
      },
    };
  }
  return {
    kind: 'outbox',
    async send(mail) {
      await db('mail_outbox').insert({ id: newId('mail'), to: mail.to, subject: mail.subject, text: mail.text });
      log.info({ to: mail.to, subject: mail.subject, ...(config.NODE_ENV === 'production' ? {} : { text: mail.text }) }, 'mail written to the outbox (no SMTP_URL)');
    },
  };
}
