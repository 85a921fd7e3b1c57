// The device authorization grant (RFC 8628) end to end: the operator's CLI registers a client,
// the RFC's error answers, the interval enforced with slow_down, one-time device codes, the access
// token working as a session bearer, the wrong-code limits, and openid-client's own device flow
// driven unchanged against the service.
import { idleJobs } from '../support/jobs.ts';
import { Command } from 'commander';
import fc from 'fast-check';
import * as oidc from 'openid-client';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createCliContext } from '../../src/cli/admin-context.ts';
import { registerOAuthAdmin } from '../../src/cli/commands/oauth.ts';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import { decideDeviceRequest, findDeviceRequest } from '../../src/domain/oauth/device.ts';
import { insertClient } from '../../src/domain/oauth/queries.ts';
import { userCodeLimits } from '../../src/domain/oauth/limits.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { testEncryptionKey } from '../support/config.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { strongPassword } from '../identity/support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let clientId: string;
let userId: string;

const grant = 'urn:ietf:params:oauth:grant-type:device_code';

async function form(path: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${web.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

async function cairnAdmin(args: string[]): Promise<string> {
  const ctx = createCliContext({
    DATABASE_URL: h.config.DATABASE_URL,
    CAIRN_ENCRYPTION_KEY: testEncryptionKey,
    LOG_LEVEL: 'silent',
  });
  const program = new Command('cairn').exitOverride();
  registerOAuthAdmin(program.command('admin'), ctx);
  let out = '';
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  try {
    await program.parseAsync(['node', 'cairn', 'admin', ...args]);
  } finally {
    spy.mockRestore();
    await ctx.close();
  }
  return out;
}

const start = (scope?: string) =>
  form('/v1/oauth/device_authorization', { client_id: clientId, ...(scope ? { scope } : {}) });
const poll = (deviceCode: string) =>
  form('/v1/oauth/token', { grant_type: grant, device_code: deviceCode, client_id: clientId });
const who = { ip: '203.0.113.9', browser: 'test-browser' };
/** Lets the next poll through without waiting out the interval in real time. */
const forgetLastPoll = () =>
  h.db('device_authorizations').update({ last_poll_time: h.db.raw(`now() - interval '1 hour'`) });

const stack = useWeb({}, { CAIRN_BASE_URL: 'https://auth.example.test' });
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  userId = (
    await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
      email: 'dev@example.com',
      password: strongPassword,
      email_verified: true,
    })
  ).id;
  const out = JSON.parse(
    await cairnAdmin([
      'oauth-clients',
      'create',
      '--env',
      env.env.name,
      '--name',
      'Acme CLI',
      '--grant',
      'device_code',
      '--scopes',
      'profile,deploy',
      '--json',
    ]),
  ) as Record<string, unknown>;
  clientId = out.client_id as string;
});

describe('operator registration', () => {
  it('creates a public device-grant client and lists it', async () => {
    expect(clientId).toMatch(/^cairn_client_[0-9a-z]{26}$/);
    const listed = JSON.parse(await cairnAdmin(['oauth-clients', 'list', '--env', env.env.name, '--json'])) as {
      oauth_clients: Record<string, unknown>[];
    };
    expect(listed.oauth_clients).toEqual([
      expect.objectContaining({
        client_id: clientId,
        name: 'Acme CLI',
        grant_types: ['device_code'],
        scopes: ['profile', 'deploy'],
        public: true,
      }),
    ]);
    await expect(
      cairnAdmin(['oauth-clients', 'create', '--env', env.env.name, '--name', 'x', '--grant', 'password']),
    ).rejects.toThrow(/unknown grant/);
  });
});

describe('device authorization endpoint', () => {
  it('answers codes in the RFC 8628 §3.2 shape', async () => {
    const r = await start('deploy');
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toMatchObject({
      verification_uri: 'https://auth.example.test/device',
      expires_in: 600,
      interval: 5,
    });
    expect(r.body.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(r.body.verification_uri_complete).toBe(
      `https://auth.example.test/device?user_code=${r.body.user_code as string}`,
    );
    const stored = JSON.stringify(await h.db('device_authorizations').select());
    expect(stored).not.toContain(r.body.device_code as string);
  });

  it('refuses unknown clients, clients without the grant and scopes outside the client', async () => {
    expect(await form('/v1/oauth/device_authorization', { client_id: 'nope' })).toMatchObject({
      status: 401,
      body: { error: 'invalid_client' },
    });
    expect(await form('/v1/oauth/device_authorization', {})).toMatchObject({
      status: 401,
      body: { error: 'invalid_client' },
    });
    const other = await insertClient(h.db, {
      id: 'cairn_client_nogrant',
      env_id: env.env.id,
      name: 'No grant',
      grant_types: [],
      scopes: [],
    });
    expect(await form('/v1/oauth/device_authorization', { client_id: other.id })).toMatchObject({
      status: 400,
      body: { error: 'unauthorized_client' },
    });
    expect(await start('admin')).toMatchObject({ status: 400, body: { error: 'invalid_scope' } });
    const json = await call(web.url, 'POST', '/v1/oauth/device_authorization', { body: { client_id: clientId } });
    expect(json).toMatchObject({ status: 400, body: { error: 'invalid_request' } });
  });
});

describe('token endpoint', () => {
  it('answers authorization_pending, then slow_down when polled too soon, growing the interval', async () => {
    const { body } = await start();
    const code = body.device_code as string;
    expect(await poll(code)).toMatchObject({ status: 400, body: { error: 'authorization_pending' } });
    expect(await poll(code)).toMatchObject({ status: 400, body: { error: 'slow_down' } });
    const row = await h
      .db('device_authorizations')
      .where({ user_code: (body.user_code as string).replace('-', '') })
      .first('interval_seconds');
    expect(row.interval_seconds).toBe(10);
  });

  it('answers access_denied once the user denies', async () => {
    const { body } = await start();
    const request = await findDeviceRequest(h.db, body.user_code as string, who);
    expect(request).toMatchObject({ client_name: 'Acme CLI', scopes: ['profile', 'deploy'] });
    await decideDeviceRequest(h.db, request, userId, false);
    await expect(decideDeviceRequest(h.db, request, userId, true)).rejects.toMatchObject({ code: 'conflict' });
    expect(await poll(body.device_code as string)).toMatchObject({ status: 400, body: { error: 'access_denied' } });
  });

  it('answers expired_token after the ten minutes', async () => {
    const { body } = await start();
    await h
      .db('device_authorizations')
      .where({ user_code: (body.user_code as string).replace('-', '') })
      .update({ expire_time: h.db.raw(`now() - interval '1 second'`) });
    expect(await poll(body.device_code as string)).toMatchObject({ status: 400, body: { error: 'expired_token' } });
    await expect(
      findDeviceRequest(h.db, body.user_code as string, { ...who, browser: 'b-expired' }),
    ).rejects.toMatchObject({ code: 'not_found' });
  });

  it('redeems an approved device code once, for a session bearer usable on /v1/client/session', async () => {
    const { body } = await start('deploy');
    const request = await findDeviceRequest(h.db, (body.user_code as string).toLowerCase().replace('-', ' '), who);
    await decideDeviceRequest(h.db, request, userId, true);
    await forgetLastPoll();
    const polls = await Promise.all([poll(body.device_code as string), poll(body.device_code as string)]);
    const won = polls.filter((p) => p.status === 200);
    expect(won).toHaveLength(1);
    expect(won[0]!.body).toMatchObject({ token_type: 'Bearer', scope: 'deploy' });
    expect(won[0]!.body.expires_in).toBeGreaterThan(29 * 86400);
    const token = won[0]!.body.access_token as string;
    expect(await call(web.url, 'GET', '/v1/client/session', { key: token })).toMatchObject({
      status: 200,
      body: { session: { method: 'device', end_user_id: userId } },
    });
    await forgetLastPoll();
    expect(await poll(body.device_code as string)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(
      await form('/v1/oauth/token', { grant_type: grant, device_code: 'cairn_dvc_x', client_id: clientId }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await form('/v1/oauth/token', { grant_type: 'password', client_id: clientId })).toMatchObject({
      status: 400,
      body: { error: 'unsupported_grant_type' },
    });
  });
});

describe('wrong user codes', () => {
  it('are limited per browser (and per IP), and then even a right code waits', async () => {
    const { body } = await start();
    const guesser = { ip: '198.51.100.7', browser: 'guessing-browser' };
    for (let i = 0; i < userCodeLimits.browser.points; i++) {
      await expect(findDeviceRequest(h.db, 'BBBB-BBBB', guesser)).rejects.toMatchObject({ code: 'not_found' });
    }
    await expect(findDeviceRequest(h.db, body.user_code as string, guesser)).rejects.toMatchObject({
      code: 'rate_limited',
    });
    // Another browser on the same address still may, until the address's own count is spent.
    expect(await findDeviceRequest(h.db, body.user_code as string, { ...guesser, browser: 'other' })).toMatchObject({
      client_id: clientId,
    });
    // Many browsers on one address: the address's own count stops them all.
    const ip = '198.51.100.99';
    for (let i = 0; i < userCodeLimits.ip.points; i++) {
      await expect(
        findDeviceRequest(h.db, 'not a code', { ip, browser: `b${i % 5}-${Math.floor(i / 5)}` }),
      ).rejects.toMatchObject({ code: 'not_found' });
    }
    await expect(findDeviceRequest(h.db, body.user_code as string, { ip, browser: 'fresh' })).rejects.toMatchObject({
      code: 'rate_limited',
      retryAfter: expect.any(Number),
    });
  });
});

describe('openid-client', () => {
  it('runs its own device flow against the service unchanged', async () => {
    const config = new oidc.Configuration(
      {
        issuer: web.url,
        device_authorization_endpoint: `${web.url}/v1/oauth/device_authorization`,
        token_endpoint: `${web.url}/v1/oauth/token`,
      },
      clientId,
      undefined,
      oidc.None(),
    );
    oidc.allowInsecureRequests(config);
    const started = await oidc.initiateDeviceAuthorization(config, { scope: 'profile' });
    const approve = (async () => {
      // Approve only after the client's first poll was answered authorization_pending.
      await eventually(
        async () =>
          (
            await h
              .db('device_authorizations')
              .where({ user_code: started.user_code.replace('-', '') })
              .first('last_poll_time')
          )?.last_poll_time,
      );
      const request = await findDeviceRequest(h.db, started.user_code, who);
      await decideDeviceRequest(h.db, request, userId, true);
    })();
    const tokens = await oidc.pollDeviceAuthorizationGrant(config, started);
    await approve;
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('profile');
    const session = await call(web.url, 'GET', '/v1/client/session', { key: tokens.access_token });
    expect(session).toMatchObject({ status: 200, body: { user: { email: 'dev@example.com' } } });
  }, 30_000);
});

describe('no client input gives a 500', () => {
  it('holds for arbitrary form fields on both endpoints', async () => {
    const field = fc.oneof(
      fc.constantFrom('client_id', 'scope', 'grant_type', 'device_code'),
      fc.string({ maxLength: 12 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(field, fc.string({ maxLength: 80 }), { maxKeys: 5 }),
        fc.constantFrom('/v1/oauth/device_authorization', '/v1/oauth/token'),
        async (fields, path) => {
          const r = await form(path, {
            ...fields,
            ...(fields.client_id === undefined && path.endsWith('token')
              ? { client_id: clientId, grant_type: grant }
              : {}),
          });
          expect(r.status).toBeLessThan(500);
          expect(typeof r.body.error).toBe('string');
        },
      ),
      { numRuns: 60 },
    );
  });
});
