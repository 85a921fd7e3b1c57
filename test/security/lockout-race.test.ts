// The lockout holds under parallel guessing from several processes: every password check is
// reserved before argon2 runs, so 100 concurrent wrong passwords for one identifier, spread over
// two web processes, run at most 10 checks (10 are counted; the rest wait for those ten to settle
// and then answer 423 locked_out with Retry-After without touching argon2, or 429 if the ten
// outlast the wait), for a known identifier
// and an unknown one alike; and the right password sent with 59 wrong ones is checked only if it
// is one of the 10 (its success then restarts the count, as a success does).
import { idleJobs } from '../support/jobs.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identifierHash } from '../../src/domain/identity/lockout/lockout.ts';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Answer, type Harness, useWeb } from '../support/harness.ts';
import { spawnWeb, type WebProcess } from '../support/web-process.ts';
import { strongPassword } from '../identity/support.ts';

let h: Harness;
let local: WebHandle;
let other: WebProcess;
let webs: { url: string }[];
let env: CreatedEnv;

// One router in front, as on Heroku: each guess comes from the address in X-Forwarded-For.
const stack = useWeb({}, { CAIRN_TRUSTED_PROXY_HOPS: '1' });
beforeAll(async () => {
  ({ h, web: local } = stack);
  other = await spawnWeb(h.config.DATABASE_URL, { CAIRN_TRUSTED_PROXY_HOPS: '1' });
  webs = [local, other];
  env = await createTestEnv(h.db);
  // A generous per-address limit, so that only the lockout answers.
  await h
    .db('envs')
    .where({ id: env.env.id })
    .update({ settings: { identity: { rate_limits: { sign_in: { points: 100_000, seconds: 60 } } } } });
});
afterAll(async () => {
  await other?.stop();
});

// Each guess from its own address: the per-address limit is not what stops them.
const signIn = (i: number, identifier: string, password: string) =>
  call(webs[i % 2]!.url, 'POST', '/v1/client/sign-in/password', {
    body: { identifier, password },
    headers: {
      'cairn-publishable-key': env.publishableKey,
      'x-forwarded-for': `198.18.${Math.floor(i / 250)}.${i % 250}`,
    },
  });

/**
 * Refused without a check: 423 locked_out once ten failures locked the identifier, or, for a
 * guess that waited for a slot among the ten in flight past the wait's deadline (a machine so
 * loaded that ten verifications outlast it), 429 rate_limited. Either with Retry-After.
 */
function refused(a: Answer): boolean {
  if (a.status !== 423 && a.status !== 429) return false;
  expect(a.body).toMatchObject({ code: a.status === 423 ? 'locked_out' : 'rate_limited' });
  expect(Number(a.headers.get('retry-after'))).toBeGreaterThan(0);
  return true;
}

async function lockRow(identifier: string) {
  return h
    .db('identity_lockouts')
    .where({ env_id: env.env.id, identifier_hash: identifierHash(env.env.id, identifier) })
    .first('failures', 'checks');
}

describe('concurrent wrong passwords', () => {
  for (const identifier of ['grace@example.com', 'no-such-user@example.com']) {
    it(`run at most 10 checks for ${identifier.startsWith('grace') ? 'a known' : 'an unknown'} identifier, across two processes`, async () => {
      if (identifier.startsWith('grace'))
        await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
          email: identifier,
          password: strongPassword,
          email_verified: true,
        });
      const answers = await Promise.all(
        Array.from({ length: 100 }, (_, i) => signIn(i, identifier, `wrong password number ${i}`)),
      );
      const statuses = answers.map((a) => a.status);
      expect(
        statuses.filter((s) => s === 401).length + answers.filter(refused).length,
        JSON.stringify(answers.filter((a) => ![401, 423, 429].includes(a.status)).map((a) => [a.status, a.body])),
      ).toBe(100);
      expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
      // The tenth failure locks and answers 423 itself.
      expect(statuses).toContain(423);
      // Exactly ten checks ran and counted; none is left in flight.
      expect(await lockRow(identifier)).toMatchObject({ failures: 10, checks: {} });
      if (identifier.startsWith('grace')) {
        const checked = await h
          .db('end_user_sign_ins')
          .where({ env_id: env.env.id, outcome: 'wrong_password' })
          .count<{ n: string }[]>('* as n')
          .first();
        expect(Number(checked!.n)).toBe(10);
      }
    });
  }

  it('check the right password only when it is one of the 10: with 59 wrong ones, at most 10 checks run', async () => {
    const identifier = 'linus@example.com';
    const user = await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
      email: identifier,
      password: strongPassword,
      email_verified: true,
    });
    const order = Array.from({ length: 60 }, (_, i) => i);
    const answers = await Promise.all(
      order.map((i) => signIn(i, identifier, i === 59 ? strongPassword : `wrong password number ${i}`)),
    );
    const checks = await h
      .db('end_user_sign_ins')
      .where({ end_user_id: user.id })
      .whereIn('outcome', ['wrong_password', 'succeeded'])
      .count<{ n: string }[]>('* as n')
      .first();
    // The right password got in only if its check was one of the first ten. A success resets the
    // count (OWASP Authentication Cheat Sheet: the counter restarts after a successful sign-in), so
    // guesses still arriving after it may run up to ten checks more, never more than that.
    if (answers[59]!.status === 200) {
      expect(
        await h.db('end_user_sign_ins').where({ end_user_id: user.id, outcome: 'succeeded' }).first(),
      ).toBeDefined();
      expect(Number(checks!.n)).toBeLessThanOrEqual(20);
      expect(answers.filter(refused).length).toBeGreaterThanOrEqual(40);
    } else {
      expect(refused(answers[59]!)).toBe(true);
      expect(Number(checks!.n)).toBeLessThanOrEqual(10);
      expect(answers.filter(refused).length).toBeGreaterThanOrEqual(50);
    }
    expect((await lockRow(identifier))!.failures).toBeLessThanOrEqual(10);
  });
});
