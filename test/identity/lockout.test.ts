// Lockout and per-IP limits across two web processes sharing one database (this one, and
// src/web.ts as a separate OS process): the count is atomic, unknown identifiers lock the same
// way, and a lock answers locked_out with Retry-After.
import { idleJobs } from '../support/jobs.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { spawnWeb, type WebProcess } from '../support/web-process.ts';
import { strongPassword } from './support.ts';

let h: Harness;
let webs: Pick<WebHandle, 'url'>[];
let local: WebHandle;
let other: WebProcess;
let env: CreatedEnv;

// One router in front, as on Heroku: each guess comes from the address in X-Forwarded-For.
const stack = useWeb({}, { CAIRN_TRUSTED_PROXY_HOPS: '1' });
beforeAll(async () => {
  ({ h, web: local } = stack);
  other = await spawnWeb(h.config.DATABASE_URL, { CAIRN_TRUSTED_PROXY_HOPS: '1' });
  webs = [local, other];
  env = await createTestEnv(h.db);
  await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
    email: 'ada@example.com',
    password: strongPassword,
    email_verified: true,
  });
});
afterAll(async () => {
  await other?.stop();
});

const signIn = (
  web: Pick<WebHandle, 'url'>,
  identifier: string,
  password: string,
  ip = '198.51.100.1',
  key = env.publishableKey,
) =>
  call(web.url, 'POST', '/v1/client/sign-in/password', {
    body: { identifier, password },
    headers: { 'cairn-publishable-key': key, 'x-forwarded-for': ip },
  });

describe('lockout', () => {
  for (const identifier of ['ada@example.com', 'nobody-here@example.com']) {
    it(`locks ${identifier.startsWith('ada') ? 'a known' : 'an unknown'} identifier after 10 failures spread over two processes`, async () => {
      // Ten concurrent failures, half on each process: exactly the tenth (whichever it is) locks.
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => signIn(webs[i % 2]!, identifier, `wrong password number ${i}`)),
      );
      expect(
        answers.filter((a) => a.status === 401),
        JSON.stringify(answers.map((a) => [a.status, a.body])),
      ).toHaveLength(9);
      expect(answers.filter((a) => a.status === 423)).toHaveLength(1);
      for (const web of webs) {
        const locked = await signIn(web, identifier, strongPassword, '198.51.100.2');
        expect(locked).toMatchObject({ status: 423, body: { code: 'locked_out' } });
        const retry = Number(locked.headers.get('retry-after'));
        expect(retry).toBeGreaterThan(14 * 60);
        expect(retry).toBeLessThanOrEqual(15 * 60);
      }
    });
  }

  it('unlocks after 15 minutes, and a success clears the count', async () => {
    await h.db('identity_lockouts').update({ locked_until: h.db.raw("now() - interval '1 second'") });
    expect((await signIn(webs[0]!, 'ada@example.com', strongPassword)).status).toBe(200);
    for (let i = 0; i < 9; i++)
      expect((await signIn(webs[i % 2]!, 'ada@example.com', 'still the wrong password')).status).toBe(401);
    expect((await signIn(webs[1]!, 'ada@example.com', strongPassword)).status).toBe(200);
    expect((await signIn(webs[0]!, 'ada@example.com', 'still the wrong password')).status).toBe(401);
  });
});

describe('per-IP rate limit', () => {
  it('answers rate_limited with Retry-After past the limit, per address', async () => {
    const limited = await createTestEnv(h.db);
    await h
      .db('envs')
      .where({ id: limited.env.id })
      .update({ settings: { identity: { rate_limits: { sign_in: { points: 3, seconds: 60 } } } } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (await signIn(webs[i % 2]!, `who${i}@example.com`, 'some wrong password', '192.0.2.50', limited.publishableKey))
          .status,
      );
    expect(statuses).toEqual([401, 401, 401, 429]);
    const res = await signIn(webs[0]!, 'x@example.com', 'some wrong password', '192.0.2.50', limited.publishableKey);
    expect(res.body).toMatchObject({ code: 'rate_limited' });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(
      (await signIn(webs[0]!, 'x@example.com', 'some wrong password', '192.0.2.51', limited.publishableKey)).status,
    ).toBe(401);
  });
});
