// Identity test helpers: a real SMTP server (smtp-server) that collects mail, the identity queues'
// worker running in-process, and shortcuts for users and sign-ins.
import { EventEmitter, once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { queues } from '../../src/queues.ts';
import type { Logger } from '../../src/log.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import type { Harness } from '../support/harness.ts';

export interface ReceivedMail {
  to: string;
  subject: string;
  text: string;
}

/** Quoted-printable as nodemailer writes it: soft line breaks and =XX escapes. */
function decodeQuotedPrintable(body: string): string {
  const bytes = body
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

function parseMail(raw: string): ReceivedMail {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1]?.trim() ?? '';
  let text = raw.slice(split + 4);
  if (/quoted-printable/i.test(header('Content-Transfer-Encoding'))) text = decodeQuotedPrintable(text);
  return { to: header('To'), subject: header('Subject'), text: text.replace(/\r\n/g, '\n') };
}

export interface MailServer<M extends ReceivedMail = ReceivedMail> {
  url: string;
  inbox: M[];
  /** The first mail (past or future) matching `match`, or a failure after the deadline. */
  waitFor(match: (m: M) => boolean, timeoutMs?: number): Promise<M>;
  close(): Promise<void>;
}

/** A real SMTP server on 127.0.0.1 keeping each mail as `parse` reads its raw text. */
export async function startMailServer<M extends ReceivedMail = ReceivedMail>(
  parse: (raw: string) => M = parseMail as (raw: string) => M,
): Promise<MailServer<M>> {
  const inbox: M[] = [];
  const events = new EventEmitter();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        inbox.push(parse(Buffer.concat(chunks).toString('latin1')));
        events.emit('mail');
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    inbox,
    async waitFor(match, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = inbox.find(match);
        if (found) return found;
        const left = deadline - Date.now();
        if (left <= 0)
          throw new Error(`no matching mail within ${timeoutMs} ms; inbox: ${inbox.map((m) => m.subject).join(' | ')}`);
        await Promise.race([once(events, 'mail'), new Promise((r) => setTimeout(r, Math.min(left, 500)))]);
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const identityQueueNames = [
  'identity.sign-up',
  'identity.password-reset',
  'identity.breached-import',
  'identity.prune',
] as const;

/** The worker for the identity queues only, so other areas' queues never hold these tests up. */
export async function startIdentityWorker(
  h: Harness,
  log?: Logger,
): Promise<WorkerHandle<Pick<typeof queues, (typeof identityQueueNames)[number]>>> {
  const registry = Object.fromEntries(identityQueueNames.map((n) => [n, queues[n]])) as Pick<
    typeof queues,
    (typeof identityQueueNames)[number]
  >;
  const mine = Object.fromEntries(identityQueueNames.map((n) => [n, handlers[n]])) as unknown as Parameters<
    typeof startWorker<typeof registry>
  >[2];
  return startWorker(h.config, registry, mine, { pollingIntervalSeconds: 0.5, ...(log ? { log } : {}) });
}

export const strongPassword = 'correct horse battery staple 42';

export function linkIn(text: string): string {
  const m = /(https?:\/\/\S+)/.exec(text);
  if (!m) throw new Error(`no link in mail: ${text}`);
  return m[1]!;
}
