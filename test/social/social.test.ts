// Social sign-in against local providers playing Google (shared client), GitHub and Apple: the
// start, the common callback (GET, and Apple's cross-site form_post), tickets and fragments,
// linking by verified email, tombstones of deleted users, provider settings with sealed secrets,
// and every relying-party check refused when broken.
import { idleJobs } from '../support/jobs.ts';
import { Command } from 'commander';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { register } from '../../src/cli/commands/social.ts';
import { createCliContext } from '../../src/cli/admin-context.ts';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { startIdp, type Breakage, type Idp } from '../support/idp.ts';
import { strongPassword } from '../identity/support.ts';
import { deliver, followProvider, type CallbackRequest } from './support.ts';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;
let google: Idp;
let github: Idp;
let apple: Idp;
const app = 'https://app.example.test/auth/done';

beforeAll(async () => {
  [google, github, apple] = await Promise.all([
    startIdp('google', { sub: 'g-1', email: 'grace@example.com', email_verified: true, name: 'Grace Hopper' }),
    startIdp('github', { sub: '4242', name: 'Octo Cat' }),
    startIdp('apple', {
      sub: 'apple-001',
      email: 'ada@privaterelay.example',
      email_verified: true,
      name: 'Ada Lovelace',
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([google, github, apple].map((i) => i?.close()));
});
// The providers call back at Cairn's CAIRN_BASE_URL, and Cairn's config names Google's issuer.
const stack = useWeb({ atBaseUrl: true }, () => ({
  CAIRN_GOOGLE_CLIENT_ID: google.clientId,
  CAIRN_GOOGLE_CLIENT_SECRET: google.clientSecret,
  CAIRN_GOOGLE_ISSUER: google.url,
}));
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db);
  const put = (path: string, body: unknown) =>
    call(web.url, 'PUT', `/v1/${env.env.name}/${path}`, { key: env.secretKey, body });
  expect((await put('identity_settings', { redirect_urls: [app] })).status).toBe(200);
  expect((await put('social_providers/google', {})).status).toBe(200);
  expect(
    (
      await put('social_providers/github', {
        client_id: github.clientId,
        client_secret: github.clientSecret,
        authorization_endpoint: `${github.url}/authorize`,
        token_endpoint: `${github.url}/token`,
        api_base_url: github.url,
      })
    ).status,
  ).toBe(200);
  expect(
    (
      await put('social_providers/apple', {
        client_id: apple.clientId,
        issuer: apple.url,
        apple: { team_id: apple.appleTeamId, key_id: apple.appleKeyId, private_key: apple.applePrivateKeyPem },
      })
    ).status,
  ).toBe(200);
});

async function start(provider: string, query: Record<string, string> = {}) {
  const q = new URLSearchParams({ publishable_key: env.publishableKey, redirect_url: app, ...query });
  return fetch(`${web.url}/v1/client/oauth/${provider}/start?${q}`, { redirect: 'manual' });
}

/** start → provider → callback; answers where the service finally sent the browser. */
async function signIn(
  provider: string,
  query: Record<string, string> = {},
): Promise<{ final: URL; callback: CallbackRequest; authorize: URL }> {
  const s = await start(provider, query);
  expect(s.status).toBe(302);
  const authorize = new URL(s.headers.get('location')!);
  const callback = await followProvider(authorize.toString());
  const done = await deliver(callback);
  expect(done.status).toBe(303);
  return { final: new URL(done.headers.get('location')!), callback, authorize };
}

const redeem = (ticket: string) =>
  call(web.url, 'POST', '/v1/client/tickets:redeem', { key: env.secretKey, body: { ticket } });

describe('provider settings', () => {
  it('are managed with the secret key; secrets are sealed and never shown', async () => {
    const list = await call<{ social_providers: Record<string, unknown>[] }>(
      web.url,
      'GET',
      `/v1/${env.env.name}/social_providers`,
      { key: env.secretKey },
    );
    expect(list.body.social_providers.map((p) => [p.provider, p.uses_shared_client, p.has_client_secret])).toEqual([
      ['apple', false, true],
      ['github', false, true],
      ['google', true, false],
    ]);
    expect(JSON.stringify(list.body)).not.toContain(github.clientSecret);
    const rows = JSON.stringify(await h.db('social_providers').select());
    expect(rows).not.toContain(github.clientSecret);
    expect(rows).not.toContain('PRIVATE KEY');
    const bad = (provider: string, body: unknown) =>
      call(web.url, 'PUT', `/v1/${env.env.name}/social_providers/${provider}`, { key: env.secretKey, body });
    expect((await bad('github', {})).status).toBe(400);
    expect(
      (
        await bad('apple', {
          client_id: 'x',
          apple: { team_id: 'TEAM123456', key_id: 'KEY1234567', private_key: 'nope' },
        })
      ).status,
    ).toBe(400);
    expect((await bad('google', { issuer: 'https://evil.example' })).status).toBe(400);
    const config = await call<{ social: { provider: string; start_url: string }[] }>(
      web.url,
      'GET',
      `/v1/client/config?publishable_key=${env.publishableKey}`,
    );
    expect(config.body.social).toContainEqual({
      provider: 'google',
      name: 'Google',
      start_url: `${h.config.CAIRN_BASE_URL}/v1/client/oauth/google/start`,
    });
  });
});

describe('Google on the shared client', () => {
  it('sends state, nonce and PKCE S256, and answers a ticket on redirect_url in server mode', async () => {
    const { final, authorize } = await signIn('google');
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      client_id: google.clientId,
      code_challenge_method: 'S256',
      redirect_uri: `${h.config.CAIRN_BASE_URL}/v1/oidc/callback`,
      scope: 'openid email profile',
    });
    expect(authorize.searchParams.get('state')!.length).toBeGreaterThan(30);
    expect(authorize.searchParams.get('nonce')!.length).toBeGreaterThan(30);
    expect(`${final.origin}${final.pathname}`).toBe(app);
    const ticket = final.searchParams.get('auth_ticket')!;
    const r = await redeem(ticket);
    expect(r).toMatchObject({
      status: 200,
      body: {
        session: { method: 'oauth_google' },
        user: { email: 'grace@example.com', email_verified: true, has_password: false },
      },
    });
  });

  it('puts the bearer in the fragment in browser mode, never in the query', async () => {
    const { final } = await signIn('google', { session_mode: 'browser' });
    expect(final.search).toBe('');
    const token = new URLSearchParams(final.hash.slice(1)).get('session_token')!;
    expect(await call(web.url, 'GET', '/v1/client/session', { key: token })).toMatchObject({
      status: 200,
      body: { user: { email: 'grace@example.com' } },
    });
  });

  it('links a verified provider email to the existing account, and drops the password of an unverified one', async () => {
    const verified = await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
      email: 'linus@example.com',
      password: strongPassword,
      email_verified: true,
    });
    google.user = { sub: 'g-linus', email: 'Linus@example.com', email_verified: true };
    const a = await redeem((await signIn('google')).final.searchParams.get('auth_ticket')!);
    expect(a.body).toMatchObject({ user: { id: verified.id, has_password: true } });

    const squatter = await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
      email: 'victim@example.com',
      password: strongPassword,
    });
    google.user = { sub: 'g-victim', email: 'victim@example.com', email_verified: true };
    const b = await redeem((await signIn('google')).final.searchParams.get('auth_ticket')!);
    expect(b.body).toMatchObject({ user: { id: squatter.id, has_password: false, email_verified: true } });

    google.user = { sub: 'g-unverified', email: 'linus@example.com', email_verified: false };
    const c = (await signIn('google')).final;
    expect(c.searchParams.get('error')).toBe('email_not_verified');
    expect(c.searchParams.get('auth_ticket')).toBeNull();
  });

  it('never lets a deleted user come back', async () => {
    google.user = { sub: 'g-gone', email: 'gone@example.com', email_verified: true };
    const first = await redeem((await signIn('google')).final.searchParams.get('auth_ticket')!);
    const id = (first.body.user as { id: string }).id;
    expect((await call(web.url, 'DELETE', `/v1/${env.env.name}/end_users/${id}`, { key: env.secretKey })).status).toBe(
      200,
    );
    const again = (await signIn('google')).final;
    expect(again.searchParams.get('error')).toBe('account_deleted');
    expect(await h.db('end_users').where({ email_normalized: 'gone@example.com' }).first()).toBeUndefined();
  });
});

describe('a locked user', () => {
  it('is refused by a known identity and by a verified email, and signs in again once unlocked', async () => {
    const users = `/v1/${env.env.name}/end_users`;
    const op = (path: string) => call(web.url, 'POST', `${users}/${path}`, { key: env.secretKey });
    google.user = { sub: 'g-locked', email: 'locked@example.com', email_verified: true };
    const first = await redeem((await signIn('google')).final.searchParams.get('auth_ticket')!);
    const id = (first.body.user as { id: string }).id;
    expect((await op(`${id}:lock`)).status).toBe(200);
    const refused = (await signIn('google', { session_mode: 'browser' })).final;
    expect(refused.searchParams.get('error')).toBe('user_locked');
    expect(refused.searchParams.get('auth_ticket')).toBeNull();
    expect(refused.hash).toBe('');

    const byEmail = await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
      email: 'locked-pw@example.com',
      password: strongPassword,
      email_verified: true,
    });
    expect((await op(`${byEmail.id}:lock`)).status).toBe(200);
    google.user = { sub: 'g-locked-pw', email: 'locked-pw@example.com', email_verified: true };
    expect((await signIn('google')).final.searchParams.get('error')).toBe('user_locked');
    // Nothing was linked: the identity is not the user's way in once it is unlocked either.
    expect(await h.db('end_user_identities').where({ subject: 'g-locked-pw' }).first()).toBeUndefined();

    google.user = { sub: 'g-locked', email: 'locked@example.com', email_verified: true };
    expect((await op(`${id}:unlock`)).status).toBe(200);
    const back = await redeem((await signIn('google')).final.searchParams.get('auth_ticket')!);
    expect(back).toMatchObject({ status: 200, body: { user: { id, locked: false } } });
  });
});

describe("GitHub and Apple on the caller's own clients", () => {
  it('GitHub: OAuth 2 plus the emails API, only a verified address', async () => {
    github.githubEmails = [
      { email: 'old@example.com', primary: false, verified: false },
      { email: 'octo@example.com', primary: true, verified: true },
    ];
    const { final, authorize } = await signIn('github');
    expect(authorize.searchParams.get('scope')).toBe('read:user user:email');
    const r = await redeem(final.searchParams.get('auth_ticket')!);
    expect(r.body).toMatchObject({
      session: { method: 'oauth_github' },
      user: { email: 'octo@example.com', email_verified: true },
    });
    expect(
      await h.db('end_user_identities').where({ provider: 'github', subject: '4242' }).first('display_name'),
    ).toEqual({ display_name: 'Octo Cat' });
  });

  it('Apple: form_post to the callback, an ES256 client secret, the name from the first sign-in', async () => {
    const { final, callback, authorize } = await signIn('apple');
    expect(authorize.searchParams.get('response_mode')).toBe('form_post');
    expect(callback.method).toBe('POST');
    expect(final.searchParams.get('error_description')).toBeNull();
    const r = await redeem(final.searchParams.get('auth_ticket')!);
    expect(r.body).toMatchObject({
      session: { method: 'oauth_apple' },
      user: { email: 'ada@privaterelay.example', email_verified: true },
    });
    expect(await h.db('end_user_identities').where({ provider: 'apple' }).first('display_name')).toEqual({
      display_name: 'Ada Lovelace',
    });
    expect(apple.redeemedCodes).toBe(1);
  });
});

describe('relying-party checks', () => {
  const broken: [string, Breakage][] = [
    ['a wrong nonce', { nonce: 'not-the-nonce' }],
    ['a wrong iss', { iss: 'https://accounts.evil.example' }],
    ['a wrong aud', { aud: 'someone-else' }],
    ['a bad signature', { foreignKey: true }],
    ['alg none', { algNone: true }],
    ['an expired ID token', { expired: true }],
    ['a wrong iss authorization response parameter (RFC 9207)', { responseIss: 'https://mix-up.example' }],
  ];
  it.each(broken)('refuses %s', async (_name, breakage) => {
    google.user = { sub: 'g-rp', email: 'rp@example.com', email_verified: true };
    const before = google.redeemedCodes;
    google.breakNext = breakage;
    const { final } = await signIn('google');
    expect(final.searchParams.get('error')).toBe('sign_in_failed');
    expect(final.searchParams.get('auth_ticket')).toBeNull();
    expect(await h.db('end_users').where({ email_normalized: 'rp@example.com' }).first()).toBeUndefined();
    // The response-parameter check fails before the code is even redeemed.
    expect(google.redeemedCodes - before).toBe(breakage.responseIss ? 0 : 1);
  });

  it('refuses a replayed state and a reused code', async () => {
    google.user = { sub: 'g-replay', email: 'replay@example.com', email_verified: true };
    const { callback } = await signIn('google');
    const replay = await deliver(callback);
    expect(replay.status).toBe(400);
    expect(await replay.json()).toMatchObject({ code: 'invalid_request', details: { reason: 'invalid_state' } });
    // A fresh flow whose callback carries the old, already redeemed code.
    const fresh = await followProvider((await start('google')).headers.get('location')!);
    const url = new URL(fresh.url);
    url.searchParams.set('code', new URL(callback.url).searchParams.get('code')!);
    const reused = await deliver({ method: 'GET', url: url.toString() });
    expect(new URL(reused.headers.get('location')!).searchParams.get('error')).toBe('sign_in_failed');
  });

  it("binds the transaction to its provider: GitHub's state cannot complete with Google's answer", async () => {
    const gh = new URL((await start('github')).headers.get('location')!);
    const g = await followProvider((await start('google')).headers.get('location')!);
    const forged = new URL(g.url);
    forged.searchParams.set('state', gh.searchParams.get('state')!);
    const r = await deliver({ method: 'GET', url: forged.toString() });
    expect(new URL(r.headers.get('location')!).searchParams.get('error')).toBe('sign_in_failed');
  });

  it('refuses a redirect_url not exactly on the list, and providers not set up', async () => {
    for (const url of [
      `${app}/`,
      `${app}?x=1`,
      'https://app.example.test/auth/don',
      'https://evil.example/auth/done',
    ]) {
      const r = await start('google', { redirect_url: url });
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({ details: { reason: 'redirect_url_not_allowed' } });
    }
    const other = await createTestEnv(h.db);
    const q = new URLSearchParams({ publishable_key: other.publishableKey, redirect_url: app });
    expect((await fetch(`${web.url}/v1/client/oauth/google/start?${q}`, { redirect: 'manual' })).status).toBe(404);
    expect((await fetch(`${web.url}/v1/client/oauth/facebook/start?${q}`, { redirect: 'manual' })).status).toBe(400);
  });
});

describe('no client input gives a 500', () => {
  it('holds for arbitrary callback parameters and start queries', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.constantFrom('state', 'code', 'error', 'iss', 'user', 'x'), fc.string({ maxLength: 60 }), {
          maxKeys: 5,
        }),
        fc.boolean(),
        async (params, post) => {
          const body = new URLSearchParams(params);
          const r = post
            ? await fetch(`${web.url}/v1/oidc/callback`, {
                method: 'POST',
                body,
                headers: { 'content-type': 'application/x-www-form-urlencoded' },
                redirect: 'manual',
              })
            : await fetch(`${web.url}/v1/oidc/callback?${body}`, { redirect: 'manual' });
          expect(r.status).toBeLessThan(500);
        },
      ),
      { numRuns: 40 },
    );
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 80 }), fc.string({ maxLength: 10 }), async (redirect, mode) => {
        const q = new URLSearchParams({
          publishable_key: env.publishableKey,
          redirect_url: redirect,
          session_mode: mode,
        });
        expect(
          (await fetch(`${web.url}/v1/client/oauth/google/start?${q}`, { redirect: 'manual' })).status,
        ).toBeLessThan(500);
      }),
      { numRuns: 30 },
    );
  });
});

describe('cairn social-providers', () => {
  it('sets, lists and deletes providers over the API, the secret read from the environment', async () => {
    const run = async (args: string[]) => {
      const ctx = createCliContext({
        CAIRN_API_URL: web.url,
        CAIRN_SECRET_KEY: env.secretKey,
        CAIRN_ENV: env.env.name,
      });
      const program = new Command('cairn').exitOverride();
      register(program, ctx);
      let out = '';
      const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
        out += String(chunk);
        return true;
      });
      try {
        await program.parseAsync(['node', 'cairn', ...args]);
      } finally {
        spy.mockRestore();
        await ctx.close();
      }
      return JSON.parse(out) as Record<string, unknown>;
    };
    process.env.CAIRN_SOCIAL_CLIENT_SECRET = 'cli-secret-value';
    try {
      const set = await run([
        'social-providers',
        'set',
        'github',
        '--client-id',
        'cli-client',
        '--api-base-url',
        github.url,
        '--json',
      ]);
      expect(set).toMatchObject({
        provider: 'github',
        client_id: 'cli-client',
        has_client_secret: true,
        api_base_url: github.url,
      });
    } finally {
      delete process.env.CAIRN_SOCIAL_CLIENT_SECRET;
    }
    const listed = await run(['social-providers', 'list', '--json']);
    expect(JSON.stringify(listed)).not.toContain('cli-secret-value');
    expect(await run(['social-providers', 'delete', 'apple', '--json'])).toEqual({ deleted: 'apple' });
    const after = (await run(['social-providers', 'list', '--json'])).social_providers as { provider: string }[];
    expect(after.map((p) => p.provider)).toEqual(['github', 'google']);
  });
});
