// Mail tokens at rest and in logs, from outside: the real worker process (workers/main.ts, as the
// Procfile runs it, NODE_ENV=production, no SMTP_URL) sends sign-up and reset mail for a test and a
// live environment. Then:
// - no table of the database holds a link's token (the outbox body is sealed, bound to its row);
// - the log shows the links of the test environment (how a developer without SMTP follows them)
//   and never a live environment's;
// - outbox rows go after 7 days (the hourly mail.prune job the worker schedules).
import { idleJobs } from '../support/jobs.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { open } from '../../src/crypto.ts';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createBoss } from '../../src/jobs/index.ts';
import type { WebHandle } from '../../src/server.ts';
import { testEncryptionKey } from '../support/config.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { dumpDatabase } from '../support/pg.ts';
import { eventually } from '../support/probes.ts';
import { strongPassword } from '../identity/support.ts';

let h: Harness;
let web: WebHandle;
let worker: ChildProcess;
let workerLog = '';
let testEnv: CreatedEnv;
let liveEnv: CreatedEnv;

const tokenPattern = /cairn_eml_[0-9A-Za-z]{32}/g;
const keyring = { currentId: 'k1', keys: new Map([['k1', Buffer.from(testEncryptionKey, 'base64')]]) };

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  testEnv = await createTestEnv(h.db);
  liveEnv = await createTestEnv(h.db, `orgs/sec-outbox/projects/p${process.pid}/envs/live`, 'live');
  worker = spawn(process.execPath, ['workers/main.ts'], {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: h.config.DATABASE_URL,
      CAIRN_ENCRYPTION_KEY: testEncryptionKey,
      NODE_ENV: 'production',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  worker.stdout?.on('data', (d: Buffer) => (workerLog += d.toString()));
  worker.stderr?.on('data', (d: Buffer) => (workerLog += d.toString()));
  await eventually(() => /worker started/.test(workerLog) || worker.exitCode !== null);
  expect(worker.exitCode).toBeNull();
});
afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((r) => worker.once('exit', r));
    worker.kill('SIGTERM');
    await exited;
  }
});

interface OutboxMail {
  id: string;
  to: string;
  body_sealed?: string;
}

const outbox = () => h.db('mail_outbox').select<OutboxMail[]>('*');

/** A verification mail (sign-up) and a reset mail (existing account) for one environment. */
async function sendMail(env: CreatedEnv, tag: string) {
  await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
    email: `known-${tag}@example.com`,
    password: strongPassword,
    email_verified: true,
  });
  const headers = { 'cairn-publishable-key': env.publishableKey };
  expect(
    (
      await call(web.url, 'POST', '/v1/client/sign-up', {
        body: { email: `new-${tag}@example.com`, password: strongPassword },
        headers,
      })
    ).status,
  ).toBe(202);
  expect(
    (await call(web.url, 'POST', '/v1/client/password-reset', { body: { email: `known-${tag}@example.com` }, headers }))
      .status,
  ).toBe(202);
}

describe('mail without SMTP_URL', () => {
  let mails: OutboxMail[];

  it('keeps no token in any table: outbox bodies are sealed, bound to their row', async () => {
    await sendMail(testEnv, 'test');
    await sendMail(liveEnv, 'live');
    mails = await eventually(async () => {
      const rows = await outbox();
      return rows.length === 4 ? rows : undefined;
    });
    const dump = (await dumpDatabase(h.db)).text;
    expect(dump.match(tokenPattern)).toBeNull();
    expect(dump).not.toContain('open this link');

    // The bodies are there for whoever holds the service key, and only on their own row.
    const [a, b] = mails;
    const body = open(keyring, a!.body_sealed!, `mail_outbox:${a!.id}`).toString();
    expect(body).toMatch(/open this link/);
    expect(() => open(keyring, a!.body_sealed!, `mail_outbox:${b!.id}`)).toThrow();
  });

  it('logs the links of a test environment, never those of a live one', async () => {
    const tokensOf = (tag: string) =>
      mails
        .filter((m) => m.to.endsWith(`-${tag}@example.com`))
        .flatMap((m) => open(keyring, m.body_sealed!, `mail_outbox:${m.id}`).toString().match(tokenPattern) ?? []);
    const testTokens = tokensOf('test');
    const liveTokens = tokensOf('live');
    expect(testTokens).toHaveLength(2);
    expect(liveTokens).toHaveLength(2);
    for (const t of testTokens) expect(workerLog).toContain(t);
    for (const t of liveTokens) expect(workerLog).not.toContain(t);
    expect(workerLog).toMatch(/live environment kept sealed in the outbox, not delivered: set SMTP_URL/);

    // The logged link is the real one: following it verifies the address.
    const verify = /https?:\/\/\S+\/v1\/client\/verify-email\?token=cairn_eml_[0-9A-Za-z]{32}/.exec(workerLog)![0];
    const link = new URL(verify);
    expect((await fetch(`${web.url}${link.pathname}${link.search}`, { redirect: 'manual' })).status).toBe(302);
    expect(
      await h.db('end_users').where({ email: 'new-test@example.com' }).whereNotNull('email_verified_time').first(),
    ).toBeDefined();
  });

  it('prunes outbox rows after 7 days, hourly, on the schedule the worker registered', async () => {
    expect(await h.db('pgboss.schedule').where({ name: 'mail.prune' }).first()).toMatchObject({ cron: '29 * * * *' });
    const [old1, old2, recent] = mails;
    await h
      .db('mail_outbox')
      .whereIn('id', [old1!.id, old2!.id])
      .update({ create_time: h.db.raw("now() - interval '7 days 1 minute'") });
    await h
      .db('mail_outbox')
      .where({ id: recent!.id })
      .update({ create_time: h.db.raw("now() - interval '6 days 23 hours'") });
    const boss = createBoss(h.config, 'web');
    await boss.start();
    try {
      await boss.send('mail.prune', {});
    } finally {
      await boss.stop({ graceful: false, close: true });
    }
    await eventually(async () => (await h.db('mail_outbox').whereIn('id', [old1!.id, old2!.id])).length === 0);
    expect((await outbox()).map((m) => m.id).sort()).toEqual(
      mails
        .slice(2)
        .map((m) => m.id)
        .sort(),
    );
  });
});
