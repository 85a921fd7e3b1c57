// The README's "Your first hour", step by step as a newcomer runs it: `npm start` in an empty
// private folder, then, from a second terminal in the same folder, each step's requests and CLI
// commands as written, the backup of its sample database included (the console's steps are followed in Chromium by the console tests). The
// terminal stays readable: no JSON line, and each mail printed whole.
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCairn } from '../support/cli.ts';
import { call } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { npmStart } from '../support/npm-start.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** `npm start` in `dir`, stopped after the file's tests. */
async function npmStartHere(dir: string) {
  const started = await npmStart(dir);
  cleanups.push(started.stop);
  return started;
}

/** A mail printed in the terminal: its whole text, once it is there. */
const printedMail = (out: () => string, to: string, after = 0) =>
  eventually(
    async () => {
      const m = new RegExp(
        `── mail to ${to.replace('.', '\\.')}: ([^\\n]*) \\([^;\\n]+;[^\\n]*──\\n([\\s\\S]*?)\\n──\\n`,
      ).exec(out().slice(after));
      return m ? { subject: m[1]!, text: m[2]! } : undefined;
    },
    { timeoutMs: 30_000, what: `a mail to ${to}` },
  );

describe("the README's first hour", () => {
  it('works as written, and the terminal stays readable', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'cairn-first-hour-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const { out, port } = await npmStartHere(dir);
    const banner = out();
    const grab = (label: string): string => new RegExp(`${label}:\\s+(\\S+)`).exec(banner)![1]!;
    const [PK, SK, ENV] = [grab('publishable key'), grab('secret key'), grab('environment')];
    const CAIRN = `http://127.0.0.1:${port}`;
    const cli = (...args: string[]) =>
      runCairn(args, { HOME: dir, CAIRN_API_URL: CAIRN, CAIRN_SECRET_KEY: SK, CAIRN_ENV: ENV }, dir);

    // 1. Look around: the banner names the docs, served with the API's description.
    expect(banner).toContain(`docs: http://localhost:${port}/docs`);
    expect((await call(CAIRN, 'GET', '/docs')).status).toBe(200);
    expect((await call(CAIRN, 'GET', '/v1/openapi.json')).status).toBe(200);

    // 2. Sign up and verify: the mail is printed, read again with the CLI, and its link verifies.
    const signUp = await call(CAIRN, 'POST', `/v1/client/sign-up?publishable_key=${PK}`, {
      body: { email: 'ada@example.com', password: 'correct horse battery staple 42' },
    });
    expect(signUp.status).toBe(202);
    const verify = await printedMail(out, 'ada@example.com');
    const outbox = await cli('admin', 'outbox', 'list', '--env', ENV);
    expect(outbox.code, outbox.stderr).toBe(0);
    expect(outbox.stdout).toContain('ada@example.com');
    const link = /https?:\/\/\S+/.exec(verify.text)![0].replace(/^http:\/\/localhost:\d+/, CAIRN);
    const opened = await fetch(link, { redirect: 'manual' });
    expect(opened.status).toBeLessThan(400);
    const signIn = await call<{ ticket?: string }>(CAIRN, 'POST', `/v1/client/sign-in/password?publishable_key=${PK}`, {
      body: { identifier: 'ada@example.com', password: 'correct horse battery staple 42' },
    });
    expect(signIn.status).toBe(200);
    expect(signIn.body.ticket).toMatch(/\S{20,}/);

    // 5 before 3: the rule must exist before the error it is told about.
    const rule = await cli(
      'alerts',
      'create',
      '--env',
      ENV,
      '--name',
      'New errors',
      '--when',
      'new_group',
      '--email',
      'you@example.com',
    );
    expect(rule.code, rule.stderr).toBe(0);
    const ruleId = /alr_\w+/.exec(rule.stdout)![0];

    // 6. Webhooks: a receiver of our own, told of the new group.
    const received: string[] = [];
    const receiver: Server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push(body);
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => receiver.close(r)));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
    const hook = await cli('webhooks', 'create', '--env', ENV, '--url', hookUrl, '--events', '*');
    expect(hook.code, hook.stderr).toBe(0);

    // 3. Capture an error and see it.
    const before = out().length;
    const captured = await call(CAIRN, 'POST', `/v1/${ENV}/error_groups:capture`, {
      key: SK,
      body: {
        error_event: {
          event_time: '2026-11-26T10:00:00Z',
          exception_type: 'TypeError',
          message: 'x is undefined',
          stack: 'TypeError: x is undefined\n    at total (/srv/app/cart.js:12:5)',
        },
      },
    });
    expect(captured.status).toBe(202);
    const listed = await eventually(
      async () => {
        const r = await cli('error-groups', 'list', '--env', ENV);
        return r.code === 0 && r.stdout.includes('x is undefined') ? r.stdout : undefined;
      },
      { timeoutMs: 30_000, what: 'the group in `cairn error-groups list`' },
    );
    expect(listed).toContain('TypeError');

    // 5. The rule's mail, printed in the terminal, and its firing recorded as sent.
    const alert = await printedMail(out, 'you@example.com', before);
    expect(alert.subject).toContain('x is undefined');
    expect(alert.text).toMatch(new RegExp(`/console/errors/eg_\\w+`));
    const firings = await eventually(
      async () => {
        const r = await cli('alerts', 'firings', ruleId, '--env', ENV);
        return r.code === 0 && /email:sent/.test(r.stdout) ? r.stdout : undefined;
      },
      { timeoutMs: 30_000, what: 'the firing recorded as sent' },
    );
    expect(firings).toContain('new_group');

    // 6. The webhook arrived for the new group.
    await eventually(async () => received.some((b) => b.includes('error_group.created')) || undefined, {
      timeoutMs: 30_000,
      what: 'the webhook of the new group',
    });

    // 4. Back up and restore the sample database on npm start's own Postgres.
    const demo = await cli('admin', 'demo-database', '--env', ENV);
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toContain('next: npx cairn backups create');
    const created = await cli('backups', 'create', '--env', ENV);
    expect(created.code, created.stderr).toBe(0);
    const listedBackups = await cli('backups', 'list', '--env', ENV);
    const backupId = /backup_\w+/.exec(listedBackups.stdout)![0];
    const plan = await cli('backups', 'restore', backupId, '--env', ENV);
    expect(plan.stdout + plan.stderr).toMatch(/4 tables, \d+ rows in all/);
    const restored = await cli('backups', 'restore', backupId, '--env', ENV, '--confirm');
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain(`restored ${backupId} into ${ENV}`);

    // The terminal: readable lines only, a handful per step.
    const lines = out().split('\n');
    expect(lines.filter((l) => l.startsWith('{'))).toEqual([]);
    expect(lines.length).toBeLessThan(150);
  }, 360_000);
});
