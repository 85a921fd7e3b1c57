// TOTP over HTTP: enrol, activate, mfa_required, ±1 step, replay refused (RFC 6238 §5.2),
// recovery codes used once, disable; the secret is stored sealed.
import { idleJobs } from '../support/jobs.ts';
import { generate } from 'otplib';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { strongPassword } from './support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
    email: 'ada@example.com',
    password: strongPassword,
    email_verified: true,
  });
});

const signIn = (extra: Record<string, unknown> = {}) =>
  call(web.url, 'POST', '/v1/client/sign-in/password', {
    body: { identifier: 'ada@example.com', password: strongPassword, session_mode: 'browser', ...extra },
    headers: { 'cairn-publishable-key': env.publishableKey },
  });
const codeAt = (secret: string, step: number) => generate({ secret, epoch: step * 30 });

describe('TOTP', () => {
  let secret: string;
  let step: number;
  let recovery: string[];

  it('enrols and activates with a first code, answering ten recovery codes', async () => {
    const token = (await signIn()).body.session_token as string;
    const enrolled = await call(web.url, 'POST', '/v1/client/factors/totp', { key: token });
    expect(enrolled.status).toBe(200);
    secret = enrolled.body.secret as string;
    expect(enrolled.body.otpauth_uri).toMatch(/^otpauth:\/\/totp\/.*secret=/);
    const row = await h.db('end_user_totp_factors').first('secret_sealed');
    expect(row.secret_sealed).toMatch(/^v1\./);
    expect(row.secret_sealed).not.toContain(secret);

    expect(
      (await call(web.url, 'POST', '/v1/client/factors/totp:activate', { key: token, body: { code: '000000' } }))
        .status,
    ).toBe(400);
    step = Math.floor(Date.now() / 30_000);
    const activated = await call(web.url, 'POST', '/v1/client/factors/totp:activate', {
      key: token,
      body: { code: await codeAt(secret, step) },
    });
    expect(activated.status).toBe(200);
    recovery = activated.body.recovery_codes as string[];
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);
    for (const c of recovery) expect(c).toMatch(/^[0-9a-z]{4}-[0-9a-z]{4}-[0-9a-z]{4}$/);
    const stored = JSON.stringify(await h.db('end_user_recovery_codes').select());
    for (const c of recovery) expect(stored).not.toContain(c);
  });

  it('answers mfa_required until a valid proof comes, and never accepts one code twice', async () => {
    expect(await signIn()).toMatchObject({
      status: 401,
      body: { code: 'mfa_required', details: { factors: ['totp', 'recovery_code'] } },
    });
    // The activation code's step is spent: replaying it is refused.
    const replayActivation = await signIn({ factor_proofs: [{ type: 'totp', code: await codeAt(secret, step) }] });
    expect(replayActivation).toMatchObject({ status: 401, body: { code: 'unauthorized' } });
    // One step ahead is within the ±1 window.
    const next = await codeAt(secret, step + 1);
    const ok = await signIn({ factor_proofs: [{ type: 'totp', code: next }] });
    expect(ok.status).toBe(200);
    expect(ok.body.user).toMatchObject({ totp_enabled: true });
    expect((await signIn({ factor_proofs: [{ type: 'totp', code: next }] })).status).toBe(401);
    expect((await signIn({ factor_proofs: [{ type: 'totp', code: 'abc' }] })).status).toBe(401);
  });

  it('accepts each recovery code once, however it is typed', async () => {
    const code = recovery[0]!;
    const first = await signIn({
      factor_proofs: [{ type: 'recovery_code', code: code.toUpperCase().replace(/-/g, ' ') }],
    });
    expect(first.status).toBe(200);
    expect((await signIn({ factor_proofs: [{ type: 'recovery_code', code }] })).status).toBe(401);
    const concurrent = await Promise.all(
      [1, 1, 1].map(() => signIn({ factor_proofs: [{ type: 'recovery_code', code: recovery[1]! }] })),
    );
    expect(concurrent.filter((r) => r.status === 200)).toHaveLength(1);
  });

  it('disables only with a valid proof', async () => {
    const token = (await signIn({ factor_proofs: [{ type: 'recovery_code', code: recovery[2]! }] })).body
      .session_token as string;
    expect(
      (
        await call(web.url, 'POST', '/v1/client/factors/totp:disable', {
          key: token,
          body: { type: 'recovery_code', code: recovery[2]! },
        })
      ).status,
    ).toBe(401);
    expect(
      (
        await call(web.url, 'POST', '/v1/client/factors/totp:disable', {
          key: token,
          body: { type: 'recovery_code', code: recovery[3]! },
        })
      ).status,
    ).toBe(200);
    expect((await signIn()).status).toBe(200);
  });

  it('counts wrong codes at disable toward the lockout, and the server can reset a lost factor', async () => {
    await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
      email: 'lost@example.com',
      password: strongPassword,
      email_verified: true,
    });
    const lost = (extra: Record<string, unknown> = {}) =>
      call(web.url, 'POST', '/v1/client/sign-in/password', {
        body: { identifier: 'lost@example.com', password: strongPassword, session_mode: 'browser', ...extra },
        headers: { 'cairn-publishable-key': env.publishableKey },
      });
    const token = (await lost()).body.session_token as string;
    const s = (await call(web.url, 'POST', '/v1/client/factors/totp', { key: token })).body.secret as string;
    const now = Math.floor(Date.now() / 30_000);
    const act = await call(web.url, 'POST', '/v1/client/factors/totp:activate', {
      key: token,
      body: { code: await codeAt(s, now) },
    });
    expect(act.status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      statuses.push(
        (
          await call(web.url, 'POST', '/v1/client/factors/totp:disable', {
            key: token,
            body: { type: 'recovery_code', code: `wrong-code-${i}` },
          })
        ).status,
      );
    }
    expect(statuses).toEqual([...Array(9).fill(401), 423]);
    expect((await lost()).status).toBe(423);

    const id = (await h.db('end_users').where({ email_normalized: 'lost@example.com' }).first('id')).id as string;
    const reset = await call(web.url, 'DELETE', `/v1/${env.env.name}/end_users/${id}/factors/totp`, {
      key: env.secretKey,
    });
    expect(reset).toMatchObject({ status: 200, body: { totp_enabled: false } });
    expect(await h.db('end_user_recovery_codes').where({ end_user_id: id }).first()).toBeUndefined();
  });
});
