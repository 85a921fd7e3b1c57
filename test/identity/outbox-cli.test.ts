// `cairn admin outbox list|show`: a test environment's outbox mails, with their links, for a
// developer without SMTP_URL; never a live environment's, never another environment's.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLogger } from '../../src/log.ts';
import { createMailer } from '../../src/mail/index.ts';
import { runCairn } from '../support/cli.ts';
import { testEncryptionKey } from '../support/config.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';

let h: Harness;

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h?.close();
});

const admin = (args: string[]) =>
  runCairn(['admin', 'outbox', ...args], { DATABASE_URL: h.database.url, CAIRN_ENCRYPTION_KEY: testEncryptionKey });

it("lists and shows a test environment's mails with their links, and nothing of another environment", async () => {
  const [env, other] = [await createTestEnv(h.db), await createTestEnv(h.db)];
  const mailer = createMailer(h.config, h.db, createLogger({ name: 'test', level: 'silent' }));
  const text = 'Confirm your address: https://app.example.com/verify?ticket=tkt_abc123\n';
  await mailer.send({ to: 'ada@example.com', subject: 'Verify your email', text }, { envId: env.env.id, mode: 'test' });
  await mailer.send({ to: 'bob@example.com', subject: 'Elsewhere', text: 'x' }, { envId: other.env.id, mode: 'test' });

  const list = await admin(['list', '--env', env.env.name, '--json']);
  expect(list.code, list.stderr).toBe(0);
  const { mails } = JSON.parse(list.stdout) as { mails: { id: string; to: string; subject: string }[] };
  expect(mails).toEqual([expect.objectContaining({ to: 'ada@example.com', subject: 'Verify your email' })]);

  const human = await admin(['list', '--env', env.env.name]);
  expect(human.stdout).toContain(`${mails[0]!.id}`);
  expect(human.stdout).toContain('cairn admin outbox show');

  const shown = await admin(['show', mails[0]!.id, '--env', env.env.name]);
  expect(shown.code, shown.stderr).toBe(0);
  expect(shown.stdout).toContain('To: ada@example.com');
  expect(shown.stdout).toContain('https://app.example.com/verify?ticket=tkt_abc123');

  const elsewhere = await admin(['show', mails[0]!.id, '--env', other.env.name]);
  expect(elsewhere.code).toBe(1);
  expect(elsewhere.stderr).toContain(`no mail ${mails[0]!.id}`);
});

it("refuses a live environment's outbox and says why", async () => {
  const live = await createTestEnv(h.db, undefined, 'live');
  const r = await admin(['list', '--env', live.env.name]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('is a live environment');
  expect(r.stderr).toContain('SMTP_URL');
});
