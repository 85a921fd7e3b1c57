// What the application's server does to its end users beyond create and delete, over HTTP: find
// them by part of an email (LIKE wildcards matching themselves), end one session and leave the
// others, and lock a user (every sign-in path refused with 403 user_locked, every session, ticket
// and device approval ended at once, sign-ins racing the lock leaving no live session) and unlock
// it again.
import { idleJobs } from '../support/jobs.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import { createOAuthClient } from '../../src/domain/oauth/clients.ts';
import { createKey, type CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { strongPassword } from './support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let userCount = 0;

// At its CAIRN_BASE_URL: the portal's /device and /consent forms are refused from any other origin.
const stack = useWeb({ atBaseUrl: true });
beforeAll(async () => {
  ({ h, web } = stack);
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

const pk = () => ({ 'cairn-publishable-key': env.publishableKey });
const userPath = (suffix = '') => `/v1/${env.env.name}/end_users${suffix}`;
const asServer = (method: string, suffix: string) => call(web.url, method, userPath(suffix), { key: env.secretKey });

async function newUser(email = `admin${++userCount}@example.com`): Promise<{ id: string; email: string }> {
  const user = await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
    email,
    password: strongPassword,
    email_verified: true,
  });
  return { id: user.id, email };
}

const signIn = (email: string, extra: Record<string, unknown> = {}) =>
  call(web.url, 'POST', '/v1/client/sign-in/password', {
    body: { identifier: email, password: strongPassword, ...extra },
    headers: pk(),
  });
async function sessionFor(email: string): Promise<string> {
  const res = await signIn(email, { session_mode: 'browser' });
  expect(res.status).toBe(200);
  return res.body.session_token as string;
}
const sessionWorks = async (token: string) =>
  (await call(web.url, 'GET', '/v1/client/session', { key: token })).status === 200;
const redeem = (ticket: string) =>
  call(web.url, 'POST', '/v1/client/tickets:redeem', { key: env.secretKey, body: { ticket } });

const post = (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${web.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });

/** A device grant the user approved on the portal (RFC 8628), not yet collected: answers the poll. */
async function approvedDevice(email: string): Promise<() => Promise<Record<string, unknown>>> {
  const client = await createOAuthClient(h.db, env.env.id, { name: 'Lock CLI', grants: ['device_code'], scopes: [] });
  const started = (await (await post('/v1/oauth/device_authorization', { client_id: client.id })).json()) as Record<
    string,
    string
  >;
  const sessionCookie = `cairn_portal_session=${await sessionFor(email)}`;
  const page = await fetch(`${web.url}/device?user_code=${started.user_code}`, { headers: { cookie: sessionCookie } });
  const html = await page.text();
  const cookie = [sessionCookie, ...page.headers.getSetCookie().map((c) => c.split(';')[0])].join('; ');
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)![1]!;
  const approved = await post('/consent', { csrf, user_code: started.user_code!, decision: 'approve' }, { cookie });
  expect(approved.status).toBe(200);
  return async () => {
    const poll = await post('/v1/oauth/token', {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: started.device_code!,
      client_id: client.id,
    });
    return { status: poll.status, ...((await poll.json()) as Record<string, unknown>) };
  };
}

describe('email_contains', () => {
  it('finds users by a part of their email in any case, with %, _ and \\ matching only themselves', async () => {
    const made = await Promise.all(
      [
        'Grace.Hopper@navy.example',
        'grace_h@example.com',
        'gracexh@example.com',
        '100%sure@example.com',
        'back\\slash@example.com',
      ].map((e) => newUser(e)),
    );
    const find = async (part: string) => {
      const res = await call<{ end_users: { email: string }[] }>(
        web.url,
        'GET',
        userPath(`?email_contains=${encodeURIComponent(part)}`),
        { key: env.secretKey },
      );
      expect(res.status).toBe(200);
      return res.body.end_users.map((u) => u.email).sort();
    };
    expect(await find('GRACE')).toEqual(['Grace.Hopper@navy.example', 'grace_h@example.com', 'gracexh@example.com']);
    expect(await find('hopper@NAVY')).toEqual(['Grace.Hopper@navy.example']);
    // `_` would match any one character, `%` anything, were they not escaped.
    expect(await find('grace_h')).toEqual(['grace_h@example.com']);
    expect(await find('0%s')).toEqual(['100%sure@example.com']);
    expect(await find('%')).toEqual(['100%sure@example.com']);
    expect(await find('k\\s')).toEqual(['back\\slash@example.com']);
    expect(await find('nobody')).toEqual([]);
    // The exact filter is still exact.
    const exact = await call<{ end_users: { id: string }[] }>(web.url, 'GET', userPath('?email=GRACE_H@example.com'), {
      key: env.secretKey,
    });
    expect(exact.body.end_users.map((u) => u.id)).toEqual([made[1]!.id]);
    expect((await asServer('GET', `?email_contains=${'a'.repeat(321)}`)).status).toBe(400);
  });
});

describe('revoking one session', () => {
  it('ends that session and leaves the others working; again is harmless; another user is 404', async () => {
    const u = await newUser();
    const [a, b] = [await sessionFor(u.email), await sessionFor(u.email)];
    const sessions = await call<{ sessions: { id: string }[] }>(web.url, 'GET', userPath(`/${u.id}/sessions`), {
      key: env.secretKey,
    });
    const [newest, older] = sessions.body.sessions.map((s) => s.id);
    const revoked = await asServer('POST', `/${u.id}/sessions/${newest}:revoke`);
    expect(revoked).toMatchObject({ status: 200, body: { id: newest, state: 'revoked' } });
    expect(await sessionWorks(b)).toBe(false);
    expect(await sessionWorks(a)).toBe(true);
    expect(await asServer('POST', `/${u.id}/sessions/${newest}:revoke`)).toMatchObject({
      status: 200,
      body: { revoke_time: revoked.body.revoke_time },
    });
    const other = await newUser();
    expect(await asServer('POST', `/${other.id}/sessions/${older}:revoke`)).toMatchObject({
      status: 404,
      body: { code: 'not_found' },
    });
    expect(await sessionWorks(a)).toBe(true);
    const readOnly = await createKey(h.db, env.env, 'secret', ['auth:read']);
    expect(
      (await call(web.url, 'POST', userPath(`/${u.id}/sessions/${older}:revoke`), { key: readOnly.token })).status,
    ).toBe(403);
  });
});

describe('locking', () => {
  it('ends every session, ticket and device approval, and refuses every sign-in until unlocked', async () => {
    const u = await newUser();
    const sessions = [await sessionFor(u.email), await sessionFor(u.email)];
    const ticket = (await signIn(u.email)).body.ticket as string;
    const poll = await approvedDevice(u.email);

    const locked = await asServer('POST', `/${u.id}:lock`);
    expect(locked).toMatchObject({ status: 200, body: { id: u.id, locked: true } });
    expect(typeof locked.body.locked_time).toBe('string');
    for (const s of sessions) expect(await sessionWorks(s)).toBe(false);
    expect(await redeem(ticket)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect(await poll()).toMatchObject({ status: 400, error: 'access_denied' });
    expect((await asServer('GET', `/${u.id}/sessions`)).body.sessions).toSatisfy((all: { state: string }[]) =>
      all.every((s) => s.state !== 'active'),
    );

    // The right password is told the account is locked; a wrong one learns nothing new.
    for (const mode of ['browser', 'server'])
      expect(await signIn(u.email, { session_mode: mode })).toMatchObject({
        status: 403,
        body: { code: 'forbidden', details: { reason: 'user_locked' } },
      });
    expect(
      await call(web.url, 'POST', '/v1/client/sign-in/password', {
        body: { identifier: u.email, password: 'not the password at all' },
        headers: pk(),
      }),
    ).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    const history = await asServer('GET', `/${u.id}/sign_ins`);
    expect((history.body.sign_ins as { outcome: string }[])[1]).toMatchObject({ outcome: 'user_locked' });
    // Locking twice keeps the first time.
    expect((await asServer('POST', `/${u.id}:lock`)).body.locked_time).toBe(locked.body.locked_time);
    expect((await asServer('GET', `/${u.id}`)).body).toMatchObject({ locked: true });

    expect(await asServer('POST', `/${u.id}:unlock`)).toMatchObject({
      status: 200,
      body: { locked: false, locked_time: null },
    });
    for (const s of sessions) expect(await sessionWorks(s)).toBe(false);
    expect(await sessionWorks(await sessionFor(u.email))).toBe(true);
    expect((await redeem((await signIn(u.email)).body.ticket as string)).status).toBe(200);
  });

  // A redeem locks its ticket and then reads the user; the lock must never hold the user and wait on
  // a ticket (a deadlock Postgres would end with an error for one side).
  it('leaves no live session behind from sign-ins and redeems racing it, and deadlocks with none', async () => {
    const u = await newUser();
    const tickets: string[] = [];
    for (let i = 0; i < 12; i++) tickets.push((await signIn(u.email)).body.ticket as string);
    const [lock, ...raced] = await Promise.all([
      asServer('POST', `/${u.id}:lock`),
      ...tickets.map(redeem),
      ...[0, 1, 2, 3].map(() => signIn(u.email, { session_mode: 'browser' })),
    ]);
    expect(lock.status).toBe(200);
    for (const r of raced) {
      if (r.status === 200) expect(await sessionWorks(r.body.session_token as string)).toBe(false);
      else expect([401, 403]).toContain(r.status);
    }
  });

  it('is 404 for a user of another environment, and needs auth:write', async () => {
    const u = await newUser();
    const other = await createTestEnv(h.db);
    for (const op of [':lock', ':unlock'])
      expect(
        (await call(web.url, 'POST', `/v1/${other.env.name}/end_users/${u.id}${op}`, { key: other.secretKey })).status,
      ).toBe(404);
    const readOnly = await createKey(h.db, env.env, 'secret', ['auth:read']);
    expect((await call(web.url, 'POST', userPath(`/${u.id}:lock`), { key: readOnly.token })).status).toBe(403);
    expect(await sessionWorks(await sessionFor(u.email))).toBe(true);
  });
});
