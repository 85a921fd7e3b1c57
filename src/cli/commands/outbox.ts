// `cairn admin outbox list|show --env …`: the mails of a test environment that went to the outbox
// (no SMTP_URL), with their links, for a developer without a mail server. A live environment's
// mails are never shown: they carry one-use sign-in and reset links for real users (set SMTP_URL).
import type { Command } from 'commander';
import { requireEnv } from '../../domain/tenancy/envs.ts';
import { outboxQueries, type OutboxRow } from '../../mail/outbox-queries.ts';
import { openOutboxBody } from '../../mail/outbox.ts';
import { CliError, type CliContext } from '../context.ts';

async function testEnv(ctx: CliContext, name: string) {
  const { db, keyring } = await ctx.admin();
  const env = await requireEnv(db, name);
  if (env.mode !== 'test')
    throw new CliError(
      `${name} is a live environment: its mails hold real users' links and are not shown; set SMTP_URL to deliver them`,
    );
  return { db, keyring, env };
}

const line = (m: OutboxRow) => `${m.id}  ${m.create_time.toISOString()}  to ${m.to}  "${m.subject}"`;

export function registerOutbox(admin: Command, ctx: CliContext): void {
  const outbox = admin
    .command('outbox')
    .description("a test environment's mails kept in the outbox (no SMTP_URL), kept 7 days");
  outbox
    .command('list')
    .description('the newest mails first')
    .requiredOption('--env <name>', 'a test environment')
    .option('--limit <n>', 'how many', (v) => Number(v), 20)
    .option('--json', 'print JSON')
    .action(async (opts: { env: string; limit: number; json?: boolean }) => {
      const { db, env } = await testEnv(ctx, opts.env);
      const rows = await outboxQueries(db).list(env.id, Math.max(1, Math.min(opts.limit || 20, 200)));
      const out = rows.map((m) => ({
        id: m.id,
        to: m.to,
        subject: m.subject,
        create_time: m.create_time.toISOString(),
      }));
      ctx.print({ mails: out }, Boolean(opts.json), () =>
        rows.length ? [...rows.map(line), 'read one: cairn admin outbox show <id> --env …'].join('\n') : 'no mails',
      );
    });
  outbox
    .command('show')
    .description('one mail with its body (its links included)')
    .argument('<id>', 'mail_…')
    .requiredOption('--env <name>', 'a test environment')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: { env: string; json?: boolean }) => {
      const { db, keyring, env } = await testEnv(ctx, opts.env);
      const row = await outboxQueries(db).get(env.id, id);
      if (!row) throw new CliError(`no mail ${id} in the outbox of ${opts.env} (mails are kept 7 days)`);
      const out = {
        id: row.id,
        to: row.to,
        subject: row.subject,
        create_time: row.create_time.toISOString(),
        text: openOutboxBody(keyring(), row),
      };
      ctx.print(
        out,
        Boolean(opts.json),
        (m: typeof out) => `To: ${m.to}\nSubject: ${m.subject}\nDate: ${m.create_time}\n\n${m.text}`,
      );
    });
}
