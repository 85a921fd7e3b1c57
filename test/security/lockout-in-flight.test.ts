// Only failures lock. Right passwords sent in a burst (many tabs, a service account, a loaded
// machine where argon2 is slow) are more checks in flight than the lockout's budget of ten: the
// ones past the budget wait for a slot and are never refused with 423 locked_out, since nothing
// failed; a wait past its deadline answers 429 rate_limited with Retry-After. Mixed with wrong
// passwords, a right one is locked out only once ten failures did lock. And the checks of a web
// process killed mid-check hold their slots only until they expire, never for good.
//
// The overlap is forced by cost, not by timing: the users' stored hashes are argon2id with four
// times the usual time cost, so each verification holds its check while the burst is reserving.
import argon2 from 'argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identifierHash } from '../../src/domain/identity/lockout/lockout.ts';
import { passwordParams } from '../../src/domain/identity/passwords.ts';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { strongPassword } from '../identity/support.ts';
import { call, createHarness, createTestEnv, type Answer, type Harness } from '../support/harness.ts';
import { idleJobs } from '../support/jobs.ts';
import { eventually } from '../support/probes.ts';
import { spawnWeb, type WebProcess } from '../support/web-process.ts';

let h: Harness;
let webs: WebProcess[] = [];
let env: CreatedEnv;

beforeAll(async () => {
  h = await createHarness();
  webs = await Promise.all([spawnWeb(h.config.DATABASE_URL), spawnWeb(h.config.DATABASE_URL)]);
  env = await createTestEnv(h.db);
  // A generous per-address limit, so that only the lockout answers.
  await h
    .db('envs')
    .where({ id: env.env.id })
    .update({ settings: { identity: { rate_limits: { sign_in: { points: 100_000, seconds: 60 } } } } });
}, 60_000);
afterAll(async () => {
  await Promise.all(webs.map((w) => w.stop()));
  await h?.close();
});

/** A verified user whose stored hash costs `timeCost` argon2 passes (the usual is 2). */
async function slowUser(email: string, timeCost: number): Promise<void> {
  const user = await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
    email,
    password: strongPassword,
    email_verified: true,
  });
  const password_hash = await argon2.hash(strongPassword.normalize('NFKC'), { ...passwordParams, timeCost });
  await h.db('end_users').where({ id: user.id }).update({ password_hash });
}

let address = 0;
// Each sign-in from its own address: the per-address limit is not what answers.
const signIn = (web: WebProcess, identifier: string, password: string) => {
  address += 1;
  return call(web.url, 'POST', '/v1/client/sign-in/password', {
    body: { identifier, password },
    headers: {
      'cairn-publishable-key': env.publishableKey,
      'x-forwarded-for': `198.18.${Math.floor(address / 250)}.${address % 250}`,
    },
  });
};

const lockRow = (identifier: string) =>
  h
    .db('identity_lockouts')
    .where({ env_id: env.env.id, identifier_hash: identifierHash(env.env.id, identifier) })
    .first<{ failures: number; checks: Record<string, number> } | undefined>('failures', 'checks');

const described = (answers: Answer[]) => JSON.stringify(answers.map((a) => [a.status, a.body]));

function expectBusy(a: Answer): void {
  expect(a.body).toMatchObject({ code: 'rate_limited' });
  expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

describe('checks in flight', () => {
  it('never lock out right passwords: 30 at once over two processes all sign in or are told to retry, none 423', async () => {
    const identifier = 'service-account@example.com';
    await slowUser(identifier, 8);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => signIn(webs[i % 2]!, identifier, strongPassword)),
    );
    expect(
      answers.filter((a) => a.status === 423),
      described(answers),
    ).toHaveLength(0);
    // The first ten reserve at once and never wait; the rest waited for their slots.
    expect(answers.filter((a) => a.status === 200).length, described(answers)).toBeGreaterThanOrEqual(10);
    for (const a of answers.filter((x) => x.status !== 200)) {
      expect(a.status, described(answers)).toBe(429);
      expectBusy(a);
    }
    const row = await lockRow(identifier);
    expect(row).toMatchObject({ failures: 0, checks: {} });
  });

  it('with 10 wrong and 20 right at once, lock a right password out only when ten failures locked it', async () => {
    const identifier = 'many-tabs@example.com';
    await slowUser(identifier, 8);
    const wrong = (i: number) => i % 3 === 0;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        signIn(webs[i % 2]!, identifier, wrong(i) ? `wrong password number ${i}` : strongPassword),
      ),
    );
    const verified = await h
      .db('end_user_sign_ins')
      .join('end_users', 'end_users.id', 'end_user_sign_ins.end_user_id')
      .where({ 'end_users.email_normalized': identifier, outcome: 'wrong_password' })
      .count<{ n: string }[]>('* as n')
      .first();
    expect(Number(verified!.n)).toBeLessThanOrEqual(10);
    // Only failures lock: any 423 here needs all ten wrong passwords checked and failed, in a row.
    if (answers.some((a) => a.status === 423)) expect(Number(verified!.n), described(answers)).toBe(10);
    for (const [i, a] of answers.entries()) {
      expect(wrong(i) ? [401, 423, 429] : [200, 423, 429], described(answers)).toContain(a.status);
      if (a.status === 429) expectBusy(a);
    }
    const row = await lockRow(identifier);
    expect(row!.failures).toBeLessThanOrEqual(10);
    expect(row!.checks).toEqual({});
  });

  it('free the slots of a process killed mid-check once they expire: meanwhile a right password waits and answers 429, not 423', async () => {
    const identifier = 'killed-mid-check@example.com';
    // So slow that the killed process settles none of its ten checks before it dies.
    await slowUser(identifier, 20);
    const doomed = await spawnWeb(h.config.DATABASE_URL);
    const guesses = Array.from({ length: 10 }, (_, i) =>
      signIn(doomed, identifier, `wrong password number ${i}`).catch(() => undefined),
    );
    await eventually(async () => Object.keys((await lockRow(identifier))?.checks ?? {}).length === 10, {
      timeoutMs: 30_000,
      intervalMs: 10,
    });
    await doomed.kill();
    await Promise.all(guesses);
    const dead = await lockRow(identifier);
    expect(dead!.failures).toBe(0);
    expect(Object.keys(dead!.checks)).toHaveLength(10);

    const waited = await signIn(webs[0]!, identifier, strongPassword);
    expect(waited.status, described([waited])).toBe(429);
    expectBusy(waited);

    // Their expiry (a minute after each was reserved) has come: the slots are free again.
    await h
      .db('identity_lockouts')
      .where({ env_id: env.env.id, identifier_hash: identifierHash(env.env.id, identifier) })
      .update({ checks: h.db.raw("(select coalesce(jsonb_object_agg(key, 0), '{}') from jsonb_each(checks))") });
    const after = await signIn(webs[1]!, identifier, strongPassword);
    expect(after.status, described([after])).toBe(200);
    expect(await lockRow(identifier)).toMatchObject({ failures: 0, checks: {} });
  }, 90_000);
});
