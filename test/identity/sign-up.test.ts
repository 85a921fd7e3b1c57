// Sign-up end to end on the real Postgres, worker and SMTP server: the 202 answer that reveals
// nothing, the worker's three outcomes, the verification link, and no plaintext password anywhere.
import { createHash } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { dumpDatabase } from '../support/pg.ts';
import { eventually } from '../support/probes.ts';
import { linkIn, startIdentityWorker, startMailServer, strongPassword, type MailServer } from './support.ts';

let h: Harness;
let web: WebHandle;
let worker: Awaited<ReturnType<typeof startIdentityWorker>>;
let mail: MailServer;
let env: CreatedEnv;
// Every log line of the web and the worker, at the most verbose level and without pino's
// redaction, so the test sees what our code hands the logger.
let logs = '';
const log = pino({ level: 'trace' }, { write: (line: string) => void (logs += line) });

beforeAll(async () => {
  mail = await startMailServer();
});
afterAll(async () => {
  await mail?.close();
});
const stack = useWeb({ log }, () => ({ SMTP_URL: mail.url, CAIRN_BASE_URL: 'http://cairn.test' }));
beforeAll(async () => {
  ({ h, web } = stack);
  worker = await startIdentityWorker(h, log);
  env = await createTestEnv(h.db);
  // The app's origin, where the verification link may send the browser back to.
  await h
    .db('envs')
    .where({ id: env.env.id })
    .update({ settings: { identity: { redirect_origins: ['https://app.example.com'] } } });
});
afterAll(async () => {
  await worker?.stop();
});

const signUp = (body: unknown) =>
  call(web.url, 'POST', '/v1/client/sign-up', { body, headers: { 'cairn-publishable-key': env.publishableKey } });
const signIn = (identifier: string, password: string) =>
  call(web.url, 'POST', '/v1/client/sign-in/password', {
    body: { identifier, password },
    headers: { 'cairn-publishable-key': env.publishableKey },
  });

describe('sign-up', () => {
  it('creates the user, mails a one-use link that verifies and redirects, then sign-in works', async () => {
    const res = await signUp({
      email: 'Ada@Example.com',
      password: strongPassword,
      redirect_url: 'https://app.example.com/welcome',
    });
    expect(res).toMatchObject({ status: 202, body: { accepted: true } });
    const m = await mail.waitFor((x) => x.to.toLowerCase().includes('ada@example.com') && /Confirm/.test(x.subject));
    const link = new URL(linkIn(m.text));
    expect(link.pathname).toBe('/v1/client/verify-email');

    // Before verification: the right password gets the clear code, never a session.
    const early = await signIn('ada@example.com', strongPassword);
    expect(early).toMatchObject({
      status: 403,
      body: { code: 'forbidden', details: { reason: 'email_not_verified' } },
    });

    const follow = await fetch(`${web.url}${link.pathname}${link.search}`, { redirect: 'manual' });
    expect(follow.status).toBe(302);
    expect(follow.headers.get('location')).toBe('https://app.example.com/welcome?email_verified=true');
    const again = await fetch(`${web.url}${link.pathname}${link.search}`, { redirect: 'manual' });
    expect(again.headers.get('location')).toBe('http://cairn.test/verify-email?status=invalid');

    const ok = await signIn('ADA@example.com ', strongPassword);
    expect(ok.status).toBe(200);
    expect(ok.body.ticket).toMatch(/^cairn_tkt_/);
  });

  it('answers an existing address the same way and mails its owner instead', async () => {
    await signUp({ email: 'grace@example.com', password: strongPassword });
    await mail.waitFor((x) => x.to.includes('grace@example.com') && /Confirm/.test(x.subject));
    const link = new URL(linkIn(mail.inbox.find((x) => x.to.includes('grace@example.com'))!.text));
    await fetch(`${web.url}${link.pathname}${link.search}`, { redirect: 'manual' });

    const res = await signUp({ email: 'grace@example.com', password: 'another long passphrase 99' });
    expect(res).toMatchObject({ status: 202, body: { accepted: true } });
    const m = await mail.waitFor((x) => x.to.includes('grace@example.com') && /attempt/.test(x.subject));
    expect(m.text).toContain('already has an account');
    expect(await h.db('end_users').where({ email_normalized: 'grace@example.com' }).count({ n: '*' })).toEqual([
      { n: '1' },
    ]);
    // The old password still signs in: the second sign-up changed nothing.
    expect((await signIn('grace@example.com', strongPassword)).status).toBe(200);
  });

  it('takes the same time for new and existing addresses', async () => {
    const time = async (email: string) => {
      const t = performance.now();
      const r = await signUp({ email, password: strongPassword });
      expect(r.status).toBe(202);
      return performance.now() - t;
    };
    const existing: number[] = [];
    const fresh: number[] = [];
    for (let i = 0; i < 8; i++) {
      existing.push(await time('grace@example.com'));
      fresh.push(await time(`timing${i}@example.com`));
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
    // Neither path looks the address up, so any gap is noise. A leak (an argon2 hash on one path
    // only, ~30-80 ms) would show as a gap of half the answer time or more, even under load.
    const [e, f] = [median(existing), median(fresh)];
    expect(Math.abs(e - f)).toBeLessThan(Math.max(20, 0.5 * Math.max(e, f)));
  });

  it('creates no account for a breached password, and the mail says why', async () => {
    const res = await signUp({ email: 'lin@example.com', password: 'PasswordPassword' });
    expect(res.status).toBe(202);
    const m = await mail.waitFor((x) => x.to.includes('lin@example.com'));
    expect(m.subject).toMatch(/not created/);
    expect(m.text).toMatch(/breach/);
    expect(await h.db('end_users').where({ email_normalized: 'lin@example.com' }).first()).toBeUndefined();
  });

  it('refuses short and malformed requests with invalid_request, and never a 500', async () => {
    expect(await signUp({ email: 'x@example.com', password: 'short' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_request' },
    });
    expect(await signUp({ email: 'not-an-email', password: strongPassword })).toMatchObject({
      status: 400,
      body: { code: 'invalid_request' },
    });
    expect(await signUp({ email: 'x@example.com', password: 'p'.repeat(257) })).toMatchObject({
      status: 400,
      body: { code: 'invalid_request' },
    });
    expect(
      await signUp({ email: 'x@example.com', password: strongPassword, redirect_url: 'javascript:alert(1)' }),
    ).toMatchObject({ status: 400 });
  });

  it('leaves no plaintext password, nor an unsalted hash of one, in any table, queue row or log line', async () => {
    const secret = 'a very particular passphrase 7731';
    await signUp({ email: 'dump@example.com', password: secret });
    await mail.waitFor((x) => x.to.includes('dump@example.com'));
    await eventually(async () =>
      (await h.db('identity_pending_signups').count({ n: '*' }))[0]!.n === '0' ? true : undefined,
    );
    const link = new URL(linkIn(mail.inbox.find((x) => x.to.includes('dump@example.com'))!.text));
    await fetch(`${web.url}${link.pathname}${link.search}`, { redirect: 'manual' });
    expect((await signIn('dump@example.com', secret)).status).toBe(200);
    expect((await signIn('dump@example.com', `${secret}x`)).status).toBe(401);

    const digests = ['sha1', 'sha256', 'md5', 'sha512'].flatMap((alg) => {
      const d = createHash(alg).update(secret).digest();
      return [d.toString('hex'), d.toString('hex').toUpperCase(), d.toString('base64')];
    });
    const { schemas, text: dump } = await dumpDatabase(h.db);
    expect(schemas.has('pgboss')).toBe(true);
    expect(dump).toContain('dump@example.com');
    expect(dump).not.toContain(secret);
    for (const d of digests) expect(dump).not.toContain(d);
    expect(logs).toContain('sign-up processed');
    expect(logs).not.toContain(secret);
    for (const d of digests) expect(logs).not.toContain(d);
    // bytea columns print as \x… hex: check those too.
    expect(dump.toLowerCase()).not.toContain(createHash('sha256').update(secret).digest('hex'));
  });
});
