// A client cannot write its own address. Unset, CAIRN_TRUSTED_PROXY_HOPS trusts no proxy (the
// web of `npm start` and of the Docker image is reached directly), so X-Forwarded-For changes no
// per-address limit; only on a Heroku dyno (DYNO set) is its router trusted by default. Behind a
// trusted proxy, an entry that is not an IP address (any text, 300 characters, a zone, a port) is
// not taken: the socket's address is, so nothing answers 500 and sessions and sign-in history
// record only IP addresses, one text per address (::ffff:203.0.113.7 is 203.0.113.7). From
// outside over HTTP, against a web started as the Procfile's and one in this process.
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userCodeLimits } from '../../src/domain/oauth/limits.ts';
import { userCodeAlphabet } from '../../src/domain/oauth/user-code.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import { testConfig } from '../support/config.ts';
import { call, createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { spawnWeb, type WebProcess } from '../support/web-process.ts';
import { strongPassword } from '../identity/support.ts';

let h: Harness;
const stops: (() => Promise<void>)[] = [];

// Not useWeb(): each test starts webs with its own proxy-hop configuration on this database.
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await h?.close();
});

/** A web as the Procfile starts it, with only the given variables beyond the required ones. */
async function spawned(env: Record<string, string> = {}): Promise<WebProcess> {
  const w = await spawnWeb(h.database.url, env);
  stops.push(w.stop);
  return w;
}

async function behindOneProxy(): Promise<WebHandle> {
  const w = await startWeb(testConfig(h.database.url, { CAIRN_TRUSTED_PROXY_HOPS: '1' }), {
    host: '127.0.0.1',
    port: 0,
  });
  stops.push(w.stop);
  return w;
}

const octet = () => randomBytes(1)[0]!;
const fake = () => `${10 + (octet() % 200)}.${octet()}.${octet()}.${octet()}`;

/** Password-reset requests until one is refused; answers how many were accepted. */
async function acceptedUntilLimited(url: string, env: CreatedEnv, forwardedFor: () => string): Promise<number> {
  for (let i = 0; i < 30; i++) {
    const res = await call(url, 'POST', '/v1/client/password-reset', {
      body: { email: `someone-${i}@example.com` },
      headers: { 'cairn-publishable-key': env.publishableKey, 'x-forwarded-for': forwardedFor() },
    });
    if (res.status === 429) {
      expect(res.body).toMatchObject({ code: 'rate_limited' });
      return i;
    }
    expect(res.status).toBe(202);
  }
  return Infinity;
}

async function newUser(url: string, env: CreatedEnv, email: string): Promise<string> {
  const res = await call(url, 'POST', `/v1/${env.env.name}/end_users`, {
    key: env.secretKey,
    body: { email, password: strongPassword, email_verified: true },
  });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

interface SignedIn {
  status: number;
  body: { session?: { ip: string | null; user_agent: string | null } };
}

const signIn = (url: string, env: CreatedEnv, email: string, headers: Record<string, string>) =>
  call(url, 'POST', '/v1/client/sign-in/password', {
    body: { identifier: email, password: strongPassword, session_mode: 'browser' },
    headers: { 'cairn-publishable-key': env.publishableKey, ...headers },
  }) as Promise<SignedIn>;

async function signInHistory(url: string, env: CreatedEnv, userId: string) {
  const res = await call<{ sign_ins: { ip: string | null; user_agent: string | null }[] }>(
    url,
    'GET',
    `/v1/${env.env.name}/end_users/${userId}/sign_ins?page_size=1000`,
    { key: env.secretKey },
  );
  expect(res.status).toBe(200);
  return res.body.sign_ins;
}

describe('with CAIRN_TRUSTED_PROXY_HOPS unset (npm start, docker run)', () => {
  it('no X-Forwarded-For resets the password-reset limit (20 per address)', async () => {
    const w = await spawned();
    const env = await createTestEnv(h.db);
    expect(await acceptedUntilLimited(w.url, env, fake)).toBe(20);
  });

  it('no X-Forwarded-For resets the /device wrong-code budget per address', async () => {
    const w = await spawned();
    let refusedAt: number | undefined;
    for (let i = 0; i < userCodeLimits.ip.points + 5 && refusedAt === undefined; i++) {
      // No cookie: each guess is a new browser, so only the per-address budget can stop them.
      const code = Array.from({ length: 8 }, () => userCodeAlphabet[octet() % userCodeAlphabet.length]).join('');
      const res = await fetch(`${w.url}/device?user_code=${code}`, {
        headers: { 'x-forwarded-for': fake() },
        redirect: 'manual',
      });
      if (res.status === 429) refusedAt = i;
      else expect(res.status).toBe(404);
      await res.arrayBuffer();
    }
    expect(refusedAt).toBe(userCodeLimits.ip.points);
  });

  it('on a Heroku dyno (DYNO set) trusts its router: the last entry is the client, what is left of it is not', async () => {
    const w = await spawned({ DYNO: 'web.1' });
    const env = await createTestEnv(h.db);
    expect(await acceptedUntilLimited(w.url, env, () => `${fake()}, 203.0.113.70`)).toBe(20);
    const other = await call(w.url, 'POST', '/v1/client/password-reset', {
      body: { email: 'x@example.com' },
      headers: { 'cairn-publishable-key': env.publishableKey, 'x-forwarded-for': '203.0.113.70, 203.0.113.71' },
    });
    expect(other.status).toBe(202);

    // The variable, when set, wins.
    const zero = await startWeb(testConfig(h.database.url, { DYNO: 'web.1', CAIRN_TRUSTED_PROXY_HOPS: '0' }), {
      host: '127.0.0.1',
      port: 0,
    });
    stops.push(zero.stop);
    expect(await acceptedUntilLimited(zero.url, await createTestEnv(h.db), fake)).toBe(20);
  });
});

describe('behind one trusted proxy', () => {
  let w: WebHandle;
  beforeAll(async () => {
    w = await behindOneProxy();
  });

  it('takes the socket address when the last entry is not an IP address: no 500, only addresses recorded', async () => {
    const env = await createTestEnv(h.db);
    const id = await newUser(w.url, env, 'hostile@example.com');
    const entries = [
      'not-an-ip <b>x</b>',
      'x'.repeat(300),
      `203.0.113.9, ${'9'.repeat(300)}`,
      `fe80::1%${'a'.repeat(300)}`,
      '203.0.113.5:443',
      '[2001:db8::1]',
      '999.1.1.1',
      '010.1.1.1',
      ', ',
    ];
    for (const xff of entries) {
      const headers = { 'cairn-publishable-key': env.publishableKey, 'x-forwarded-for': xff };
      const signedIn = await signIn(w.url, env, 'hostile@example.com', { 'x-forwarded-for': xff });
      expect(signedIn.status, xff.slice(0, 40)).toBe(200);
      expect(signedIn.body.session?.ip).toBe('127.0.0.1');
      const signUp = await call(w.url, 'POST', '/v1/client/sign-up', {
        body: { email: `new-${randomBytes(4).toString('hex')}@example.com`, password: strongPassword },
        headers,
      });
      expect(signUp.status, xff.slice(0, 40)).toBe(202);
      const reset = await call(w.url, 'POST', '/v1/client/password-reset', {
        body: { email: 'hostile@example.com' },
        headers,
      });
      expect(reset.status, xff.slice(0, 40)).toBe(202);
    }
    const history = await signInHistory(w.url, env, id);
    expect(history).toHaveLength(entries.length);
    for (const s of history) expect(s.ip).toBe('127.0.0.1');
  });

  it('writes one address one way: an IPv4-mapped IPv6 address is its IPv4 address, in the limits and the records', async () => {
    const env = await createTestEnv(h.db);
    const forms = ['::ffff:203.0.113.50', '203.0.113.50', '::FFFF:cb00:7132', '0:0:0:0:0:ffff:203.0.113.50'];
    let n = 0;
    expect(await acceptedUntilLimited(w.url, env, () => forms[n++ % forms.length]!)).toBe(20);

    await newUser(w.url, env, 'mapped@example.com');
    const ipOf = async (xff: string) =>
      (await signIn(w.url, env, 'mapped@example.com', { 'x-forwarded-for': xff })).body.session?.ip;
    expect(await ipOf('::ffff:203.0.113.51')).toBe('203.0.113.51');
    expect(await ipOf('2001:DB8:0:0::1')).toBe('2001:db8::1');
  });

  it('records an IP address and a bounded user agent, and never answers 5xx, whatever X-Forwarded-For says', async () => {
    const env = await createTestEnv(h.db);
    const id = await newUser(w.url, env, 'fuzz@example.com');
    // What a header value may carry (no NUL, CR or LF; latin-1), with the characters of addresses often.
    const headerChar = fc.oneof(
      fc.constantFrom(',', ' ', ':', '.', '%', '[', ']', 'f', '0', '1', '9'),
      fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)),
    );
    const text = (maxLength: number) => fc.string({ unit: headerChar, maxLength });
    const entry = fc.oneof(
      fc.ipV4(),
      fc.ipV6(),
      fc.ipV4Extended(),
      fc.ipV4().map((ip) => `::ffff:${ip}`),
      fc.ipV6().map((ip) => `${ip.toUpperCase()}%eth0`),
      text(300),
    );
    const forwardedFor = fc.oneof(
      text(400),
      fc.array(entry, { minLength: 1, maxLength: 4 }).map((e) => e.join(', ')),
    );
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(forwardedFor, text(2000), async (xff, userAgent) => {
        runs += 1;
        const res = await signIn(w.url, env, 'fuzz@example.com', { 'x-forwarded-for': xff, 'user-agent': userAgent });
        expect(res.status).toBe(200);
        const ip = res.body.session!.ip!;
        expect(isIP(ip), ip).not.toBe(0);
        const last = xff.split(',').at(-1)!.trim();
        if (isIP(last) === 4) expect(ip).toBe(last);
        if (isIP(last) === 0) expect(ip).toBe('127.0.0.1');
        expect((res.body.session!.user_agent ?? '').length).toBeLessThanOrEqual(500);
      }),
      { numRuns: 40 },
    );
    const history = await signInHistory(w.url, env, id);
    expect(history).toHaveLength(runs);
    for (const s of history) {
      expect(isIP(s.ip ?? ''), String(s.ip)).not.toBe(0);
      expect((s.user_agent ?? '').length).toBeLessThanOrEqual(500);
    }
  });
});
