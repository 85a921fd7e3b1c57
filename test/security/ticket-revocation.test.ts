// Revocation ends every way back in, from outside over HTTP. A ticket (two minutes, redeemed by
// the application's server) and an approved but not yet collected device grant each become a
// session later; if they outlive "sign this user out everywhere", the attacker who held one walks
// back in right after the owner reacted. So revoking sessions, resetting the password and
// deleting the user end them with the sessions, and changing a second factor ends them too (a
// ticket issued before TOTP was turned on was issued without it). Races included: redeems running
// while the revocation commits never leave a live session behind.
import { idleJobs } from '../support/jobs.ts';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import { createOAuthClient } from '../../src/domain/oauth/clients.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { linkIn, startIdentityWorker, startMailServer, strongPassword, type MailServer } from '../identity/support.ts';

let h: Harness;
let web: WebHandle;
let worker: Awaited<ReturnType<typeof startIdentityWorker>>;
let mail: MailServer;
let env: CreatedEnv;
let userCount = 0;

beforeAll(async () => {
  mail = await startMailServer();
});
afterAll(async () => {
  await mail?.close();
});
// At its CAIRN_BASE_URL, as the links it mails name it.
const stack = useWeb({ atBaseUrl: true }, () => ({ SMTP_URL: mail.url }));
beforeAll(async () => {
  ({ h, web } = stack);
  worker = await startIdentityWorker(h);
  env = await createTestEnv(h.db);
  const generous = { points: 100_000, seconds: 60 };
  expect(
    (
      await call(web.url, 'PUT', `/v1/${env.env.name}/identity_settings`, {
        key: env.secretKey,
        body: { rate_limits: { sign_in: generous, redeem: generous } },
      })
    ).status,
  ).toBe(200);
});
afterAll(async () => {
  await worker?.stop();
});

const pk = () => ({ 'cairn-publishable-key': env.publishableKey });

async function newUser(): Promise<{ id: string; email: string }> {
  userCount += 1;
  const email = `revoke${userCount}@example.com`;
  const user = await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
    email,
    password: strongPassword,
    email_verified: true,
  });
  return { id: user.id, email };
}

async function signIn(email: string, extra: Record<string, unknown> = {}) {
  const res = await call(web.url, 'POST', '/v1/client/sign-in/password', {
    body: { identifier: email, password: strongPassword, ...extra },
    headers: pk(),
  });
  expect(res.status).toBe(200);
  return res.body;
}
const ticketFor = async (email: string, extra: Record<string, unknown> = {}) =>
  (await signIn(email, extra)).ticket as string;
const sessionFor = async (email: string) => (await signIn(email, { session_mode: 'browser' })).session_token as string;
const redeem = (ticket: string) =>
  call(web.url, 'POST', '/v1/client/tickets:redeem', { key: env.secretKey, body: { ticket } });
const userPath = (id: string) => `/v1/${env.env.name}/end_users/${id}`;
const revoke = (id: string) => call(web.url, 'POST', `${userPath(id)}:revokeSessions`, { key: env.secretKey });
const codeAt = (secret: string, step: number) => generate({ secret, epoch: step * 30 });

async function expectEnded(ticket: string) {
  expect(await redeem(ticket)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
}

/** Enrols and activates TOTP with the session bearer; answers the secret, the step used and the recovery codes. */
async function turnOnTotp(session: string): Promise<{ secret: string; step: number; recovery: string[] }> {
  const enrolled = await call(web.url, 'POST', '/v1/client/factors/totp', { key: session });
  const secret = enrolled.body.secret as string;
  const step = Math.floor(Date.now() / 30_000);
  const activated = await call(web.url, 'POST', '/v1/client/factors/totp:activate', {
    key: session,
    body: { code: await codeAt(secret, step) },
  });
  expect(activated.status).toBe(200);
  return { secret, step, recovery: activated.body.recovery_codes as string[] };
}

describe('tickets issued before', () => {
  it(':revokeSessions end, while tickets issued after it still work', async () => {
    const u = await newUser();
    const before = await ticketFor(u.email);
    expect((await revoke(u.id)).status).toBe(200);
    await expectEnded(before);
    expect((await redeem(await ticketFor(u.email))).status).toBe(200);
  });

  it('a password reset end', async () => {
    const u = await newUser();
    const before = await ticketFor(u.email);
    expect(
      (await call(web.url, 'POST', '/v1/client/password-reset', { body: { email: u.email }, headers: pk() })).status,
    ).toBe(202);
    const m = await mail.waitFor((x) => x.to.includes(u.email) && /Reset/.test(x.subject));
    const token = new URL(linkIn(m.text)).searchParams.get('reset_token')!;
    expect(
      (
        await call(web.url, 'POST', '/v1/client/password-reset:confirm', {
          body: { token, password: 'a brand new passphrase for this one' },
          headers: pk(),
        })
      ).status,
    ).toBe(200);
    await expectEnded(before);
  });

  it('deleting the user end', async () => {
    const u = await newUser();
    const before = await ticketFor(u.email);
    expect((await call(web.url, 'DELETE', userPath(u.id), { key: env.secretKey })).status).toBe(200);
    await expectEnded(before);
  });

  it('turning TOTP on end; so do turning it off and the operator removing it', async () => {
    const u = await newUser();
    const session = await sessionFor(u.email);
    const beforeOn = await ticketFor(u.email);
    const { secret, step, recovery } = await turnOnTotp(session);
    await expectEnded(beforeOn);
    // The session that turned it on keeps working: changing a factor ends tickets, not sessions.
    expect((await call(web.url, 'GET', '/v1/client/session', { key: session })).status).toBe(200);

    const beforeOff = await ticketFor(u.email, {
      factor_proofs: [{ type: 'totp', code: await codeAt(secret, step + 1) }],
    });
    expect(
      (
        await call(web.url, 'POST', '/v1/client/factors/totp:disable', {
          key: session,
          body: { type: 'recovery_code', code: recovery[0] },
        })
      ).status,
    ).toBe(200);
    await expectEnded(beforeOff);

    const again = await turnOnTotp(session);
    const beforeReset = await ticketFor(u.email, {
      factor_proofs: [{ type: 'totp', code: await codeAt(again.secret, again.step + 1) }],
    });
    expect((await call(web.url, 'DELETE', `${userPath(u.id)}/factors/totp`, { key: env.secretKey })).status).toBe(200);
    await expectEnded(beforeReset);
  });
});

describe('racing the revocation', () => {
  it('no redeem running beside :revokeSessions leaves a live session, and no ticket survives it', async () => {
    const u = await newUser();
    // One after another: at most 10 password checks of one identifier run at once (the lockout's reservations).
    const tickets: string[] = [];
    for (let i = 0; i < 24; i++) tickets.push(await ticketFor(u.email));
    // Half are redeemed while the revocation runs, half only after it answered.
    const [racing, late] = [tickets.slice(0, 12), tickets.slice(12)];
    const [revoked, ...redeemed] = await Promise.all([revoke(u.id), ...racing.map(redeem)]);
    expect(revoked.status).toBe(200);
    for (const r of redeemed) {
      if (r.status === 200)
        expect((await call(web.url, 'GET', '/v1/client/session', { key: r.body.session_token as string })).status).toBe(
          401,
        );
      else expect(r.status).toBe(401);
    }
    for (const t of late) await expectEnded(t);
  });
});

describe('device grants approved before', () => {
  it(':revokeSessions refuses the device its token instead of handing out a new session', async () => {
    const u = await newUser();
    const client = await createOAuthClient(h.db, env.env.id, {
      name: 'Revocation CLI',
      grants: ['device_code'],
      scopes: [],
    });
    const form = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${web.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(fields),
      });
    const started = (await (await form('/v1/oauth/device_authorization', { client_id: client.id })).json()) as Record<
      string,
      string
    >;

    // The owner approves on the portal, signed in there with a session of their own.
    const sessionCookie = `cairn_portal_session=${await sessionFor(u.email)}`;
    const page = await fetch(`${web.url}/device?user_code=${started.user_code}`, {
      headers: { cookie: sessionCookie },
    });
    const html = await page.text();
    const cookie = [sessionCookie, ...page.headers.getSetCookie().map((c) => c.split(';')[0])].join('; ');
    const approved = await form(
      '/consent',
      { csrf: /name="csrf" value="([^"]+)"/.exec(html)![1]!, user_code: started.user_code!, decision: 'approve' },
      { cookie },
    );
    expect(approved.status).toBe(200);

    expect((await revoke(u.id)).status).toBe(200);
    const poll = await form('/v1/oauth/token', {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: started.device_code!,
      client_id: client.id,
    });
    const body = (await poll.json()) as Record<string, unknown>;
    expect(body.access_token).toBeUndefined();
    expect(poll.status).toBe(400);
    expect(body.error).toBe('access_denied');
  });
});
