// Open redirects, from outside over HTTP. A redirect target a client gives (sign-up's and password
// reset's redirect_url, social sign-in's, the Account Portal's, sign-out's `next`) is where a
// browser later carries a one-use token (a reset token, a ticket, a session in the fragment), so
// an unchecked one hands the account to whoever names the target. The rule, per mode:
// - a live environment: only origins on its `redirect_origins` (or exact `redirect_urls`), and
//   the service's own portal pages; nothing else, not even localhost;
// - a test environment: the same plus http://localhost and http://127.0.0.1 on any port;
// - a refusal is 400 invalid_request naming the setting to change;
// - where a path is expected (sign-out's `next`), only a same-origin path.
import { idleJobs } from '../support/jobs.ts';
import { createHash, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEndUser } from '../../src/domain/identity/users/users.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, type Harness, createTestEnv, useWeb } from '../support/harness.ts';

let h: Harness;
let web: WebHandle;
let base: string;
let counter = 0;

const stack = useWeb({ atBaseUrl: true });
beforeAll(async () => {
  ({ h, web } = stack);
  base = h.config.CAIRN_BASE_URL;
});

const app = 'https://app.example.com';

/** A fresh environment (per-IP limits are per environment), set up as the case needs. */
async function makeEnv(mode: 'test' | 'live', settings: Record<string, unknown> = {}): Promise<CreatedEnv> {
  counter += 1;
  const env = await createTestEnv(h.db, `orgs/sec-redirects/projects/p${process.pid}/envs/${mode}${counter}`, mode);
  const put = (path: string, body: unknown) =>
    call(web.url, 'PUT', `/v1/${env.env.name}/${path}`, { key: env.secretKey, body });
  expect(
    (await put('identity_settings', { rate_limits: { sign_up: { points: 10_000, seconds: 60 } }, ...settings })).status,
  ).toBe(200);
  expect((await put('social_providers/github', { client_id: 'gh-client', client_secret: 'gh-secret' })).status).toBe(
    200,
  );
  return env;
}

const pk = (env: CreatedEnv) => ({ 'cairn-publishable-key': env.publishableKey });

/** Every API entry point that takes a redirect_url, answering its status and body. */
const entryPoints = {
  'sign-up': (env: CreatedEnv, url: string) =>
    call(web.url, 'POST', '/v1/client/sign-up', {
      body: {
        email: `u${randomBytes(6).toString('hex')}@example.com`,
        password: 'correct horse battery staple 42',
        redirect_url: url,
      },
      headers: pk(env),
    }),
  'password reset': (env: CreatedEnv, url: string) =>
    call(web.url, 'POST', '/v1/client/password-reset', {
      body: { email: 'someone@example.com', redirect_url: url },
      headers: pk(env),
    }),
  'social start': async (env: CreatedEnv, url: string) => {
    const q = new URLSearchParams({ publishable_key: env.publishableKey, redirect_url: url });
    const res = await fetch(`${web.url}/v1/client/oauth/github/start?${q}`, { redirect: 'manual' });
    const text = await res.text();
    return {
      status: res.status,
      body: (res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as Record<string, unknown>,
    };
  },
  'portal sign-in': async (env: CreatedEnv, url: string) => {
    const res = await fetch(
      `${web.url}/sign-in?${new URLSearchParams({ publishable_key: env.publishableKey, redirect_url: url })}`,
      { redirect: 'manual' },
    );
    return { status: res.status, body: { html: await res.text() } as Record<string, unknown> };
  },
  'portal sign-up': async (env: CreatedEnv, url: string) => {
    const res = await fetch(
      `${web.url}/sign-up?${new URLSearchParams({ publishable_key: env.publishableKey, redirect_url: url })}`,
      { redirect: 'manual' },
    );
    return { status: res.status, body: { html: await res.text() } as Record<string, unknown> };
  },
};

const okStatus: Record<keyof typeof entryPoints, number> = {
  'sign-up': 202,
  'password reset': 202,
  'social start': 302,
  'portal sign-in': 200,
  'portal sign-up': 200,
};

/** Targets no environment accepts unless it lists them, and shapes nothing should accept. */
const hostile = [
  'https://attacker.example/steal',
  'http://attacker.example/',
  '//attacker.example/x',
  '/\\attacker.example',
  'javascript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  `${app}.attacker.example/`,
  `${app}@attacker.example/`,
  `https://user:pass@app.example.com/`,
  `${app}\\@attacker.example/`,
  `${app}/\nSet-Cookie: x=1`,
  'http://localhost.attacker.example/',
  'http://127.0.0.1.attacker.example/',
  `${app}:8443/`,
  'http://app.example.com/',
];

async function expectRefused(env: CreatedEnv, url: string) {
  for (const [name, send] of Object.entries(entryPoints)) {
    const res = await send(env, url);
    expect({ name, url, status: res.status }).toEqual({ name, url, status: 400 });
    if (name.startsWith('portal')) expect(String(res.body.html)).toContain('redirect_origins');
    else {
      expect(res.body).toMatchObject({ code: 'invalid_request' });
      expect(String(res.body.message)).toContain('redirect_origins');
    }
  }
}

async function expectAccepted(env: CreatedEnv, url: string) {
  for (const [name, send] of Object.entries(entryPoints)) {
    const res = await send(env, url);
    expect({ name, url, status: res.status }).toEqual({
      name,
      url,
      status: okStatus[name as keyof typeof entryPoints],
    });
  }
}

describe('a live environment without redirect_origins', () => {
  it("accepts only the portal's own pages: no app origin, no localhost, nothing hostile", async () => {
    const env = await makeEnv('live');
    await expectAccepted(env, `${base}/sign-in`);
    for (const url of [
      'https://app.example.com/welcome',
      'http://localhost:5173/callback',
      'http://127.0.0.1:8080/callback',
      ...hostile,
    ])
      await expectRefused(env, url);
  });

  it('mails no reset link to a foreign origin: the attack of the report (reset → attacker origin) is refused', async () => {
    const env = await makeEnv('live');
    const res = await entryPoints['password reset'](env, 'https://attacker.example/reset');
    expect(res).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    expect(String(res.body.message)).toMatch(/redirect_origins/);
    expect(String(res.body.message)).toContain(`/v1/${env.env.name}/identity_settings`);
    expect(
      await h
        .db('pgboss.job')
        .where({ name: 'identity.password-reset' })
        .whereRaw("data->>'env_id' = ?", [env.env.id])
        .first(),
    ).toBeUndefined();
  });
});

describe('a live environment with redirect_origins', () => {
  it('accepts its listed origin on any path, and nothing else', async () => {
    const env = await makeEnv('live', { redirect_origins: [app] });
    await expectAccepted(env, `${app}/welcome`);
    await expectAccepted(env, `${app}/reset?from=mail`);
    for (const url of ['http://localhost:5173/callback', ...hostile]) await expectRefused(env, url);
  });
});

describe('a test environment', () => {
  it('also accepts http://localhost and http://127.0.0.1 on any port, and still refuses everything else', async () => {
    const env = await makeEnv('test');
    for (const url of ['http://localhost:5173/callback', 'http://127.0.0.1:8080/callback', 'http://localhost/done'])
      await expectAccepted(env, url);
    for (const url of ['https://app.example.com/welcome', ...hostile]) await expectRefused(env, url);
  });
});

describe('stored targets', () => {
  it('a verification link stored with a target the environment does not allow goes to the portal instead', async () => {
    const env = await makeEnv('live');
    const user = await createEndUser({ db: h.db, jobs: idleJobs(h.config) }, env.env.id, {
      email: 'stored@example.com',
    });
    // As a row accepted before the rule existed would hold it.
    const token = `cairn_eml_${'A'.repeat(16)}${randomBytes(8).toString('hex')}`;
    await h.db('end_user_email_tokens').insert({
      token_hash: createHash('sha256').update(token).digest(),
      env_id: env.env.id,
      end_user_id: user.id,
      purpose: 'verify_email',
      redirect_url: 'https://attacker.example/landing',
      expire_time: h.db.raw("now() + interval '1 hour'"),
    });
    const res = await fetch(`${web.url}/v1/client/verify-email?token=${token}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.origin).toBe(new URL(base).origin);
    expect(location.pathname).toBe('/verify-email');
  });
});

describe('sign-out next', () => {
  /** A portal page's cookie and CSRF token. */
  async function portalForm(env: CreatedEnv) {
    const res = await fetch(`${web.url}/sign-in?publishable_key=${env.publishableKey}`);
    const html = await res.text();
    return {
      cookie: res.headers
        .getSetCookie()
        .map((c) => c.split(';')[0])
        .join('; '),
      csrf: /name="csrf" value="([^"]+)"/.exec(html)![1]!,
    };
  }
  const signOut = (form: { cookie: string; csrf: string }, next: string) =>
    fetch(`${web.url}/sign-out`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: form.cookie },
      body: new URLSearchParams({ csrf: form.csrf, next }),
    });

  it('is a same-origin path or refused: never another host by slashes, backslashes, schemes or control characters', async () => {
    const env = await makeEnv('live');
    const form = await portalForm(env);
    for (const next of [
      '//attacker.example/',
      '/\\attacker.example',
      '/\\/attacker.example',
      '\\\\attacker.example',
      '/\t/attacker.example',
      '/\n/attacker.example',
      'https://attacker.example/',
      'javascript:alert(1)',
      'attacker.example',
      `${base}/device`,
    ]) {
      const res = await signOut(form, next);
      expect({ next, status: res.status }).toEqual({ next, status: 400 });
      expect(res.headers.get('location')).toBeNull();
    }
    const ok = await signOut(form, '/device?user_code=BBBB-BBBB');
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/device?user_code=BBBB-BBBB');
  });
});

describe('the redirect_origins setting itself', () => {
  it('takes an origin only (scheme, host, port as a browser writes it), with a message showing the right form', async () => {
    const env = await makeEnv('live');
    const put = (origins: string[]) =>
      call(web.url, 'PUT', `/v1/${env.env.name}/identity_settings`, {
        key: env.secretKey,
        body: { redirect_origins: origins },
      });
    for (const bad of [
      'https://user:pass@app.example.com',
      `${app}\\@attacker.example`,
      'https://*.example.com',
      `${app}/`,
      `${app}/path`,
      'https://App.Example.com',
      ` ${app}`,
      `${app}:443`,
      'ftp://app.example.com',
      `${app}?x=1`,
      `${app}#x`,
      'app.example.com',
      'null',
    ]) {
      const res = await put([bad]);
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
      expect(res.body).toMatchObject({ code: 'invalid_request' });
    }
    expect(String((await put(['https://App.Example.com'])).body.message)).toContain('"https://app.example.com"');
    for (const good of [[app], ['http://localhost:3000'], ['https://[::1]:8443', 'https://xn--bcher-kva.example']]) {
      expect((await put(good)).status).toBe(200);
    }
  });
});
