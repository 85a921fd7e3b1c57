// The rest of the client API: configuration, password reset by mail, and fast-check properties
// that no client body, however malformed, gets a 500.
import { idleJobs } from '../support/jobs.ts';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { linkIn, startIdentityWorker, startMailServer, strongPassword, type MailServer } from './support.ts';

let h: Harness;
let web: WebHandle;
let worker: Awaited<ReturnType<typeof startIdentityWorker>>;
let mail: MailServer;
let env: CreatedEnv;
let sessionToken: string;

beforeAll(async () => {
  mail = await startMailServer();
});
afterAll(async () => {
  await mail?.close();
});
const stack = useWeb({}, () => ({ SMTP_URL: mail.url }));
beforeAll(async () => {
  ({ h, web } = stack);
  worker = await startIdentityWorker(h);
  env = await createTestEnv(h.db);
  const generous = { points: 100_000, seconds: 60 };
  await h
    .db('envs')
    .where({ id: env.env.id })
    .update({
      settings: {
        identity: {
          branding: { name: 'Shop', colors: { primary: '#112233' } },
          rate_limits: { sign_in: generous, sign_up: generous },
          redirect_origins: ['https://shop.example'],
        },
      },
    });
  await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
    email: 'ada@example.com',
    password: strongPassword,
    email_verified: true,
  });
  const res = await call(web.url, 'POST', '/v1/client/sign-in/password', {
    body: { identifier: 'ada@example.com', password: strongPassword, session_mode: 'browser' },
    headers: { 'cairn-publishable-key': env.publishableKey },
  });
  sessionToken = res.body.session_token as string;
});
afterAll(async () => {
  await worker?.stop();
});

const pk = () => ({ 'cairn-publishable-key': env.publishableKey });

describe('client configuration', () => {
  it('reports methods, social providers and branding', async () => {
    const res = await call(web.url, 'GET', `/v1/client/config?publishable_key=${env.publishableKey}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      methods: {
        password: { enabled: true, min_length: 15, max_length: 256 },
        totp: { enabled: true },
        magic_link: { enabled: false },
        email_code: { enabled: false },
        passkey: { enabled: false },
      },
      social: [],
      branding: { name: 'Shop', colors: { primary: '#112233' } },
    });
    expect((await call(web.url, 'GET', '/v1/client/config')).status).toBe(401);
  });
});

describe('password reset', () => {
  it('always answers 202, mails a one-use link to an existing account, and ends its sessions', async () => {
    expect(
      await call(web.url, 'POST', '/v1/client/password-reset', {
        body: { email: 'nobody@example.com' },
        headers: pk(),
      }),
    ).toMatchObject({ status: 202, body: { accepted: true } });
    const res = await call(web.url, 'POST', '/v1/client/password-reset', {
      body: { email: 'ada@example.com', redirect_url: 'https://shop.example/reset' },
      headers: pk(),
    });
    expect(res).toMatchObject({ status: 202, body: { accepted: true } });
    const m = await mail.waitFor((x) => /Reset/.test(x.subject));
    const link = new URL(linkIn(m.text));
    expect(link.origin + link.pathname).toBe('https://shop.example/reset');
    const token = link.searchParams.get('reset_token')!;
    const confirm = (password: string) =>
      call(web.url, 'POST', '/v1/client/password-reset:confirm', { body: { token, password }, headers: pk() });
    expect(await confirm('passwordpassword')).toMatchObject({
      status: 400,
      body: { details: { reason: 'breached_password' } },
    });
    const fresh = 'a brand new passphrase for ada';
    expect(await confirm(fresh)).toMatchObject({ status: 200, body: { reset: true } });
    expect(await confirm(`${fresh}!`)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect((await call(web.url, 'GET', '/v1/client/session', { key: sessionToken })).status).toBe(401);
    const signIn = await call(web.url, 'POST', '/v1/client/sign-in/password', {
      body: { identifier: 'ada@example.com', password: fresh, session_mode: 'browser' },
      headers: pk(),
    });
    expect(signIn.status).toBe(200);
    sessionToken = signIn.body.session_token as string;
    expect(mail.inbox.filter((x) => x.to.includes('nobody@example.com'))).toEqual([]);
  });
});

describe('no client body gives a 500', () => {
  const routes: [string, string, 'pk' | 'sk' | 'session'][] = [
    ['POST', '/v1/client/sign-up', 'pk'],
    ['POST', '/v1/client/sign-in/password', 'pk'],
    ['POST', '/v1/client/tickets:redeem', 'sk'],
    ['POST', '/v1/client/password-reset', 'pk'],
    ['POST', '/v1/client/password-reset:confirm', 'pk'],
    ['POST', '/v1/client/factors/totp:activate', 'session'],
    ['POST', '/v1/client/factors/totp:disable', 'session'],
  ];
  const headersFor = (auth: 'pk' | 'sk' | 'session'): Record<string, string> =>
    auth === 'pk' ? pk() : { authorization: `Bearer ${auth === 'sk' ? env.secretKey : sessionToken}` };

  const shaped = fc.record(
    {
      email: fc.oneof(fc.string(), fc.emailAddress(), fc.anything()),
      password: fc.oneof(fc.string({ maxLength: 300 }), fc.anything()),
      identifier: fc.oneof(fc.string(), fc.constant('ada@example.com')),
      session_mode: fc.oneof(fc.constantFrom('server', 'browser'), fc.anything()),
      factor_proofs: fc.oneof(
        fc.array(fc.record({ type: fc.constantFrom('totp', 'recovery_code', 'x'), code: fc.string() })),
        fc.anything(),
      ),
      ticket: fc.oneof(fc.string(), fc.anything()),
      token: fc.oneof(fc.string(), fc.anything()),
      code: fc.oneof(fc.string(), fc.anything()),
      type: fc.oneof(fc.constantFrom('totp', 'recovery_code'), fc.anything()),
      redirect_url: fc.oneof(fc.webUrl(), fc.string()),
    },
    { requiredKeys: [] },
  );

  for (const [method, route, auth] of routes) {
    it(`${method} ${route}`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.oneof(shaped, fc.jsonValue()), async (body) => {
          const res = await call(web.url, method, route, { body, headers: headersFor(auth) });
          expect(res.status).toBeLessThan(500);
          expect(typeof (res.body as { code?: unknown }).code === 'string' || res.status < 300).toBe(true);
        }),
        { numRuns: 40 },
      );
      await fc.assert(
        fc.asyncProperty(fc.string({ maxLength: 200 }), async (raw) => {
          const res = await call(web.url, method, route, {
            rawBody: raw,
            headers: { ...headersFor(auth), 'content-type': 'application/json' },
          });
          expect(res.status).toBeLessThan(500);
        }),
        { numRuns: 20 },
      );
    });
  }
});
