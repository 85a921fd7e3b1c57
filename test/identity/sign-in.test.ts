// Password sign-in, tickets and sessions over HTTP on the real Postgres: enumeration-safe
// failures, the ticket's two minutes and single use under concurrency, both session modes,
// revocation and deletion taking effect at once, idle expiry, rehash, and sign-in history.
import { idleJobs } from '../support/jobs.ts';
import argon2 from 'argon2';
import { beforeAll, describe, expect, it } from 'vitest';
import { pruneIdentity } from '../../src/domain/identity/prune.ts';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { strongPassword } from './support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let other: CreatedEnv;

// One router in front, as on Heroku: the sign-in history records the address it appends.
const stack = useWeb({}, { CAIRN_TRUSTED_PROXY_HOPS: '1' });
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  other = await createTestEnv(h.db);
  await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
    email: 'ada@example.com',
    password: strongPassword,
    email_verified: true,
  });
});

const pk = () => ({ 'cairn-publishable-key': env.publishableKey });
const signIn = (identifier: string, password: string, extra: Record<string, unknown> = {}) =>
  call(web.url, 'POST', '/v1/client/sign-in/password', { body: { identifier, password, ...extra }, headers: pk() });
const redeem = (ticket: string, key = env.secretKey) =>
  call(web.url, 'POST', '/v1/client/tickets:redeem', { key, body: { ticket } });
const session = (token: string) => call(web.url, 'GET', '/v1/client/session', { key: token });
const usersPath = (suffix = '') => `/v1/${env.env.name}/end_users${suffix}`;

async function newUser(email: string): Promise<string> {
  const res = await call(web.url, 'POST', usersPath(), {
    key: env.secretKey,
    body: { email, password: strongPassword, email_verified: true },
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

describe('password sign-in', () => {
  it('answers a wrong password and an unknown identifier alike, in the same time', async () => {
    const wrong = await signIn('ada@example.com', 'wrong password but long enough');
    const unknown = await signIn('nobody@example.com', 'wrong password but long enough');
    for (const r of [wrong, unknown])
      expect(r).toMatchObject({
        status: 401,
        body: { code: 'unauthorized', message: 'the identifier or password is wrong' },
      });

    const time = async (identifier: string) => {
      const t = performance.now();
      expect((await signIn(identifier, 'another wrong password here')).status).toBe(401);
      return performance.now() - t;
    };
    const known: number[] = [];
    const missing: number[] = [];
    for (let i = 0; i < 6; i++) {
      known.push(await time('ada@example.com'));
      missing.push(await time(`timing-missing-${i}@example.com`));
    }
    // Both run one argon2id verification. Skipping it for unknown identifiers would make that
    // path over ten times faster; a ratio (not an absolute gap) stays stable on a loaded machine.
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;
    expect(Math.min(...missing)).toBeGreaterThan(10);
    const ratio = median(missing) / median(known);
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });

  it('server mode: a ticket that the server redeems once for a session', async () => {
    const res = await signIn('ada@example.com', strongPassword);
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('session_token');
    const expires = Date.parse(res.body.expires_at as string);
    expect(expires - Date.now()).toBeGreaterThan(100_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(121_000);

    const first = await redeem(res.body.ticket as string);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      user: { email: 'ada@example.com' },
      session: { state: 'active', method: 'password' },
    });
    expect(first.body.session_token).toMatch(/^cairn_sess_[0-9A-Za-z]{32}$/);
    const replay = await redeem(res.body.ticket as string);
    expect(replay).toMatchObject({
      status: 401,
      body: { code: 'unauthorized', message: 'the ticket is unknown, expired or already used' },
    });
    const cur = await session(first.body.session_token as string);
    expect(cur).toMatchObject({ status: 200, body: { user: { email: 'ada@example.com' } } });
  });

  it('refuses an expired ticket, an unknown one and one of another environment alike', async () => {
    const res = await signIn('ada@example.com', strongPassword);
    const foreign = await redeem(res.body.ticket as string, other.secretKey);
    await h.db('end_user_tickets').update({ expire_time: h.db.raw("now() - interval '1 second'") });
    const expired = await redeem(res.body.ticket as string);
    const unknown = await redeem(`cairn_tkt_${'A'.repeat(32)}`);
    for (const r of [foreign, expired, unknown])
      expect(r).toMatchObject({
        status: 401,
        body: { code: 'unauthorized', message: 'the ticket is unknown, expired or already used' },
      });
    expect((await redeem('garbage')).status).toBe(401);
  });

  it('lets exactly one of many concurrent redeems win', async () => {
    const res = await signIn('ada@example.com', strongPassword);
    const answers = await Promise.all(Array.from({ length: 12 }, () => redeem(res.body.ticket as string)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 401)).toHaveLength(11);
  });

  it("browser mode: the bearer at once; sign-out ends it, and only it: the user's other session and ticket go on", async () => {
    const res = await signIn('ada@example.com', strongPassword, { session_mode: 'browser' });
    expect(res.status).toBe(200);
    const token = res.body.session_token as string;
    expect((await session(token)).status).toBe(200);
    const elsewhere = (await signIn('ada@example.com', strongPassword, { session_mode: 'browser' })).body
      .session_token as string;
    const ticket = (await signIn('ada@example.com', strongPassword)).body.ticket as string;
    expect(await call(web.url, 'POST', '/v1/client/sign-out', { key: token })).toMatchObject({
      status: 200,
      body: { signed_out: true },
    });
    expect(await session(token)).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    expect((await session(elsewhere)).status).toBe(200);
    expect((await redeem(ticket)).status).toBe(200);
    expect((await session(`cairn_sess_${'B'.repeat(32)}`)).status).toBe(401);
    expect((await session(env.secretKey)).status).toBe(401);
  });

  it('ends a session after its idle lifetime, and slides it while in use', async () => {
    const res = await signIn('ada@example.com', strongPassword, { session_mode: 'browser' });
    const token = res.body.session_token as string;
    const id = (res.body.session as { id: string }).id;
    await h
      .db('end_user_sessions')
      .where({ id })
      .update({ last_active_time: h.db.raw("now() - interval '2 minutes'") });
    const before = (await h.db('end_user_sessions').where({ id }).first('idle_expire_time')).idle_expire_time as Date;
    expect((await session(token)).status).toBe(200);
    const after = (await h.db('end_user_sessions').where({ id }).first('idle_expire_time')).idle_expire_time as Date;
    expect(after.getTime()).toBeGreaterThanOrEqual(before.getTime());
    await h
      .db('end_user_sessions')
      .where({ id })
      .update({ idle_expire_time: h.db.raw("now() - interval '1 second'") });
    expect((await session(token)).status).toBe(401);
  });

  it('rehashes a password made with older parameters at sign-in', async () => {
    const id = await newUser('old-hash@example.com');
    const old = await argon2.hash(strongPassword, {
      type: argon2.argon2id,
      memoryCost: 8192,
      timeCost: 1,
      parallelism: 1,
    });
    await h.db('end_users').where({ id }).update({ password_hash: old });
    expect((await signIn('old-hash@example.com', strongPassword)).status).toBe(200);
    const now = (await h.db('end_users').where({ id }).first('password_hash')).password_hash as string;
    expect(now).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
  });
});

describe('revocation', () => {
  it('revoke-sessions ends every session at once and lists them as revoked', async () => {
    const id = await newUser('revoke@example.com');
    const tokens = await Promise.all(
      [0, 1].map(
        async () =>
          (await signIn('revoke@example.com', strongPassword, { session_mode: 'browser' })).body
            .session_token as string,
      ),
    );
    for (const t of tokens) expect((await session(t)).status).toBe(200);
    const r = await call(web.url, 'POST', usersPath(`/${id}:revokeSessions`), { key: env.secretKey });
    expect(r).toMatchObject({ status: 200, body: { revoked: 2 } });
    for (const t of tokens) expect((await session(t)).status).toBe(401);
    const list = await call<{ sessions: { state: string }[] }>(web.url, 'GET', usersPath(`/${id}/sessions`), {
      key: env.secretKey,
    });
    expect(list.body.sessions.map((s) => s.state)).toEqual(['revoked', 'revoked']);
  });

  it('deleting a user ends their sessions at once and later sign-ins look like a wrong password', async () => {
    const id = await newUser('gone@example.com');
    const token = (await signIn('gone@example.com', strongPassword, { session_mode: 'browser' })).body
      .session_token as string;
    const ticket = (await signIn('gone@example.com', strongPassword)).body.ticket as string;
    expect((await call(web.url, 'DELETE', usersPath(`/${id}`), { key: env.secretKey })).status).toBe(200);
    expect((await session(token)).status).toBe(401);
    expect((await redeem(ticket)).status).toBe(401);
    expect(await signIn('gone@example.com', strongPassword)).toMatchObject({
      status: 401,
      body: { code: 'unauthorized', message: 'the identifier or password is wrong' },
    });
    expect((await call(web.url, 'GET', usersPath(`/${id}`), { key: env.secretKey })).status).toBe(404);
  });
});

describe('sign-in history', () => {
  it('records time, method, outcome, IP and user agent, newest first', async () => {
    const id = await newUser('history@example.com');
    await call(web.url, 'POST', '/v1/client/sign-in/password', {
      body: { identifier: 'history@example.com', password: 'not the right password!' },
      headers: { ...pk(), 'user-agent': 'probe/1', 'x-forwarded-for': '203.0.113.9' },
    });
    await signIn('history@example.com', strongPassword);
    const res = await call<{
      sign_ins: { outcome: string; method: string; ip: string; user_agent: string; time: string }[];
    }>(web.url, 'GET', usersPath(`/${id}/sign_ins`), { key: env.secretKey });
    expect(res.status).toBe(200);
    expect(res.body.sign_ins.map((s) => s.outcome)).toEqual(['succeeded', 'wrong_password']);
    expect(res.body.sign_ins[1]).toMatchObject({ method: 'password', ip: '203.0.113.9', user_agent: 'probe/1' });
  });
});

describe('prune', () => {
  it('drops history older than 90 days and sessions ended over a week ago, keeping the rest', async () => {
    const id = await newUser('prune@example.com');
    await signIn('prune@example.com', strongPassword, { session_mode: 'browser' });
    await signIn('prune@example.com', strongPassword, { session_mode: 'browser' });
    const [oldest] = await h.db('end_user_sign_ins').where({ end_user_id: id }).orderBy('id').limit(1).pluck('id');
    await h
      .db('end_user_sign_ins')
      .where({ id: oldest })
      .update({ time: h.db.raw("now() - interval '91 days'") });
    const [ended] = await h.db('end_user_sessions').where({ end_user_id: id }).orderBy('id').limit(1).pluck('id');
    await h
      .db('end_user_sessions')
      .where({ id: ended })
      .update({ revoke_time: h.db.raw("now() - interval '8 days'") });
    const deleted = await pruneIdentity(h.db);
    expect(deleted).toMatchObject({ sign_ins: 1, sessions: 1 });
    expect(await h.db('end_user_sign_ins').where({ end_user_id: id }).pluck('id')).toHaveLength(1);
    expect(await h.db('end_user_sessions').where({ end_user_id: id }).pluck('id')).toHaveLength(1);
  });
});
