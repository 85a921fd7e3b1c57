// The console's sign-in from outside over HTTP and the CLI:
// - /console/sign-in counts every sign-in of an address against the per-address limit of other
//   sign-ins (300 per 5 minutes); past it, 429 with Retry-After, even for a right key, while
//   another address signs in. The address is the client's (the last X-Forwarded-For entry behind
//   one trusted router, the socket's with none): entries the client writes reset nothing.
// - `cairn admin console-sessions list|revoke --env` shows an environment's live sessions (how
//   each was opened, its times, never a token) and ends them: a revoked session's cookie is sent
//   to the sign-in page on its next request.
import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultLimits } from '../../src/domain/identity/limits.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import { fetchForm, postForm } from '../console/support.ts';
import { runCairn } from '../support/cli.ts';
import { testConfig } from '../support/config.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';

/** The per-address limit of the other sign-ins, which the console's shares. */
const consoleSignInLimit = defaultLimits.sign_in;

/** Chromium, CLI processes and hundreds of requests on a shared, busy machine: no timing is asserted. */
const slow = 240_000;

let h: Harness;
/** One trusted router in front (CAIRN_TRUSTED_PROXY_HOPS=1): the client is the last X-Forwarded-For entry. */
let web: WebHandle;
let env: CreatedEnv;

const stack = useWeb({ atBaseUrl: true }, { CAIRN_TRUSTED_PROXY_HOPS: '1' });
beforeAll(async () => {
  ({ h, web } = stack);
  env = await createTestEnv(h.db, `orgs/sec-console-limits/projects/p${process.pid}/envs/e1`);
});

const octet = () => randomBytes(1)[0]!;
const fake = () => `${10 + (octet() % 200)}.${octet()}.${octet()}.${octet()}`;
const wrongKey = () => `cairn_sk_test_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;

interface Browserish {
  base: string;
  cookie: string;
  csrf: string;
}

/** The sign-in page's cookie and CSRF token, as a browser has them before it signs in. */
async function signInForm(base: string): Promise<Browserish> {
  const page = await fetchForm(`${base}/console/sign-in`);
  expect(page.status).toBe(200);
  return { base, cookie: page.cookie, csrf: page.fields.csrf! };
}

const signIn = (b: Browserish, key: string, forwardedFor?: string) =>
  postForm(`${b.base}/console/sign-in`, { csrf: b.csrf, key }, b.cookie, {
    ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
  });

/** Wrong keys, 10 at a time, until one is refused; answers how many were answered 401 before it. */
async function wrongKeysUntilLimited(b: Browserish, forwardedFor: () => string | undefined): Promise<number> {
  let accepted = 0;
  for (let round = 0; round < consoleSignInLimit.points / 10 + 5; round++) {
    const answers = await Promise.all(Array.from({ length: 10 }, () => signIn(b, wrongKey(), forwardedFor())));
    for (const res of answers) {
      const html = await res.text();
      expect(res.headers.getSetCookie().join('\n')).not.toContain('cairn_console_session=');
      if (res.status === 429) {
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(html).toContain('Too many sign-ins from this address');
        continue;
      }
      expect(res.status).toBe(401);
      expect(html).toContain('That key does not open the console');
      accepted += 1;
    }
    if (answers.some((r) => r.status === 429)) return accepted;
  }
  return Infinity;
}

const cli = (args: string[]) => runCairn(['admin', ...args], { DATABASE_URL: h.config.DATABASE_URL });

const sessionOf = (res: Response) => /cairn_console_session=([^;]+)/.exec(res.headers.getSetCookie().join('\n'))?.[1];

async function pageWith(session: string): Promise<Response> {
  return fetch(`${web.url}/console/errors`, {
    redirect: 'manual',
    headers: { cookie: `cairn_console_session=${session}` },
  });
}

describe('the console sign-in limit', () => {
  it(
    'refuses an address past 300 sign-ins with 429 and Retry-After; forged X-Forwarded-For entries reset nothing',
    async () => {
      const b = await signInForm(web.url);
      const real = '203.0.113.41';
      expect(await wrongKeysUntilLimited(b, () => `${fake()}, ${fake()}, ${real}`)).toBe(consoleSignInLimit.points);
      // The right key from that address is refused too: the limit is the address's, not the key's.
      const right = await signIn(b, env.secretKey, `${fake()}, ${real}`);
      expect(right.status).toBe(429);
      expect(sessionOf(right)).toBeUndefined();
      // Another address signs in.
      const other = await signIn(b, env.secretKey, `${real}, 203.0.113.42`);
      expect(other.status).toBe(303);
      expect(other.headers.get('location')).toBe('/console/errors');
    },
    slow,
  );

  it(
    'keys on the socket address when no proxy is trusted: any X-Forwarded-For is ignored',
    async () => {
      const w = await startWeb(testConfig(h.database.url, { CAIRN_TRUSTED_PROXY_HOPS: '0' }), {
        host: '127.0.0.1',
        port: 0,
      });
      try {
        const b = await signInForm(w.url);
        expect(await wrongKeysUntilLimited(b, () => fake())).toBe(consoleSignInLimit.points);
        const right = await signIn(b, env.secretKey, fake());
        expect(right.status).toBe(429);
        // A link's button is a sign-in too, counted the same way.
        const link = await runCairn(['admin', 'console-link', '--env', env.env.name], {
          DATABASE_URL: h.config.DATABASE_URL,
          CAIRN_BASE_URL: w.url,
        });
        const form = await fetchForm(link.stdout.trim());
        const posted = await postForm(`${w.url}/console/sign-in/link`, form.fields, form.cookie, {
          'x-forwarded-for': fake(),
        });
        expect(posted.status).toBe(429);
        expect((await fetchForm(link.stdout.trim())).status).toBe(200);
      } finally {
        await w.stop();
      }
    },
    slow,
  );
});

describe('cairn admin console-sessions', () => {
  it(
    'lists live sessions without tokens and revokes one, then all: their cookies go to sign-in at once',
    async () => {
      // One session from a secret key, one from an operator's link (its button), from their own address.
      const b = await signInForm(web.url);
      const byKey = await signIn(b, env.secretKey, '198.51.100.7');
      expect(byKey.status).toBe(303);
      const keySession = sessionOf(byKey)!;
      const link = await runCairn(['admin', 'console-link', '--env', env.env.name], {
        DATABASE_URL: h.config.DATABASE_URL,
        CAIRN_BASE_URL: web.url,
      });
      const form = await fetchForm(link.stdout.trim());
      const byLink = await postForm(`${web.url}/console/sign-in/link`, form.fields, form.cookie, {
        'x-forwarded-for': '198.51.100.8',
      });
      expect(byLink.status).toBe(303);
      const linkSession = sessionOf(byLink)!;
      for (const s of [keySession, linkSession]) expect((await pageWith(s)).status).toBe(200);

      const listed = await cli(['console-sessions', 'list', '--env', env.env.name, '--json']);
      expect(listed.code, listed.stderr).toBe(0);
      for (const s of [keySession, linkSession]) expect(listed.stdout).not.toContain(s);
      const { sessions } = JSON.parse(listed.stdout) as {
        sessions: {
          id: string;
          opened_by: string;
          key_id: string | null;
          create_time: string;
          last_use_time: string;
          expire_time: string;
        }[];
      };
      // The first test's sign-in from another address is live too.
      expect(sessions.map((s) => s.opened_by).sort()).toEqual(['key', 'key', 'link']);
      for (const s of sessions) {
        expect(s.id).toMatch(/^cs_/);
        expect(Object.keys(s).sort()).toEqual(
          ['create_time', 'expire_time', 'id', 'key_id', 'last_use_time', 'opened_by'].sort(),
        );
        expect(Date.parse(s.last_use_time)).toBeGreaterThanOrEqual(Date.parse(s.create_time));
        expect(Date.parse(s.expire_time) - Date.parse(s.create_time)).toBe(12 * 3600_000);
        expect(s.key_id === null).toBe(s.opened_by === 'link');
      }
      const human = await cli(['console-sessions', 'list', '--env', env.env.name]);
      expect(human.code, human.stderr).toBe(0);
      for (const s of sessions) expect(human.stdout).toContain(s.id);

      // The link's session has no key to revoke: the operator ends it by id.
      const linkId = sessions.find((s) => s.opened_by === 'link')!.id;
      const one = await cli(['console-sessions', 'revoke', linkId, '--env', env.env.name, '--json']);
      expect(one.code, one.stderr).toBe(0);
      expect(JSON.parse(one.stdout)).toEqual({ revoked: [linkId] });
      const ended = await pageWith(linkSession);
      expect(ended.status).toBe(303);
      expect(ended.headers.get('location')).toBe('/console/sign-in');
      expect((await pageWith(keySession)).status).toBe(200);

      // Again, or an id of no live session: an error naming how to list them; nothing else ends.
      const again = await cli(['console-sessions', 'revoke', linkId, '--env', env.env.name]);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toContain('console-sessions list');
      const neither = await cli(['console-sessions', 'revoke', '--env', env.env.name]);
      expect(neither.code).not.toBe(0);
      expect(neither.stderr).toContain('--all');
      expect((await pageWith(keySession)).status).toBe(200);

      const all = await cli(['console-sessions', 'revoke', '--all', '--env', env.env.name, '--json']);
      expect(all.code, all.stderr).toBe(0);
      expect((JSON.parse(all.stdout) as { revoked: string[] }).revoked).toHaveLength(2);
      expect((await pageWith(keySession)).status).toBe(303);
      const empty = await cli(['console-sessions', 'list', '--env', env.env.name, '--json']);
      expect(JSON.parse(empty.stdout)).toEqual({ sessions: [] });
    },
    slow,
  );
});
