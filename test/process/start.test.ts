// `npm start` on a machine where nothing is configured: an embedded Postgres, the local-disk
// object store, a demo environment, a banner whose secret key reaches an authenticated route, and
// the worker's services running (a captured error is processed and stored), the landing page at the
// base URL, and the banner's console link: used by its page's button, then naming the banner's command.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fetchForm, postForm } from '../console/support.ts';
import { call } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { npmStart, runStart } from '../support/npm-start.ts';

let dir: string | undefined;

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm start with nothing configured', () => {
  it('runs embedded services, prints the base URL and demo keys, and the secret key works', async () => {
    dir = await mkdtemp(join(tmpdir(), 'cairn-start-'));
    const started = await npmStart(dir, { LOG_LEVEL: 'info' });
    const { child, port } = started;
    const out = () => started.out();
    try {
      const base = /Cairn is running at (\S+)/.exec(out())?.[1];
      const env = /environment:\s+(\S+)/.exec(out())?.[1];
      const secret = /secret key:\s+(\S+)/.exec(out())?.[1];
      expect(base).toBe(`http://localhost:${port}`);
      expect(/publishable key:\s+cairn_pk_test_\w{32}/.test(out())).toBe(true);
      const res = await call(base!.replace('localhost', '127.0.0.1'), 'GET', `/v1/${env}`, { key: secret });
      expect(res).toMatchObject({ status: 200, body: { name: env, mode: 'test' } });
      // Error ingestion is a worker service, not a queue: it must run here as in the Procfile's worker.
      const api = base!.replace('localhost', '127.0.0.1');
      const captured = await call<{ uid: string }>(api, 'POST', `/v1/${env}/error_groups:capture`, {
        key: secret,
        body: {
          error_event: {
            event_time: '2026-11-21T12:00:00Z',
            exception_type: 'TypeError',
            message: 'from npm start',
            stack: 'TypeError: from npm start\n    at run (/srv/app.js:1:2)',
          },
        },
      });
      expect(captured.status).toBe(202);
      const stored = await eventually(
        async () => {
          const r = await call<{ message: string }>(
            api,
            'GET',
            `/v1/${env}/error_groups/-/error_events/${captured.body.uid}`,
            { key: secret },
          );
          return r.status === 200 ? r.body : undefined;
        },
        { timeoutMs: 20_000 },
      );
      expect(stored.message).toBe('from npm start');
      // The base URL is a page linking the console; the banner's console link is used by its page's
      // button only, and once used its page gives the command the banner gives for another.
      const home = await fetch(`${api}/`);
      expect(home.status).toBe(200);
      expect(await home.text()).toContain('href="/console"');
      const link = /console:\s+(\S+)/.exec(out())![1]!.replace('localhost', '127.0.0.1');
      const another = /another: ([^)\n]+)\)/.exec(out())![1]!;
      expect(another).toBe(`npx cairn admin console-link --env ${env}`);
      await fetchForm(link);
      const form = await fetchForm(link);
      expect(form.status).toBe(200);
      expect((await postForm(`${api}/console/sign-in/link`, form.fields, form.cookie)).status).toBe(303);
      const used = await postForm(`${api}/console/sign-in/link`, form.fields, form.cookie);
      expect(used.status).toBe(410);
      expect(await used.text()).toContain(another);
      // Without SMTP_URL, a test environment's mail is printed readably, its link included.
      const signUp = await call(api, 'POST', '/v1/client/sign-up', {
        headers: { 'cairn-publishable-key': /publishable key:\s+(\S+)/.exec(out())![1]! },
        body: { email: 'newcomer@example.com', password: 'correct horse battery staple 42' },
      });
      expect(signUp.status).toBe(202);
      await eventually(async () => (/── mail to newcomer@example\.com: /.test(out()) ? true : undefined), {
        timeoutMs: 20_000,
      });
      expect(out()).toMatch(/── mail to newcomer@example\.com: [^\n]+\n[\s\S]*https?:\/\/\S+[\s\S]*\n──\n/);
      // The terminal reads as text: a request is one line, and no JSON line is printed.
      expect(out()).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d GET /v1/${env} 200 \\d+ ms$`, 'm'));
      expect(out()).toMatch(/^\d\d:\d\d:\d\d POST \/v1\/client\/sign-up 202 \d+ ms$/m);
      expect(out()).not.toMatch(/^\{"level"/m);
      // A second `npm start` in the same folder says the first is running, and where.
      const second = await runStart(dir, started.env);
      expect(second.code).toBe(1);
      expect(second.out).toContain(
        `Cairn could not start: Cairn is already running from this folder (pid ${child.pid}) at http://localhost:${port}`,
      );
      expect(second.out).toContain(`kill ${child.pid}`);
      // mkdtemp makes a 0700 folder, as root's home is: the database lives where postgres can reach.
      expect(existsSync(join(dir, '.data', 'postgres', 'PG_VERSION'))).toBe(true);
    } finally {
      expect(await started.stop(), started.out()).toBe(0);
    }
  }, 120_000);
});
