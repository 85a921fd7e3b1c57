// The /device page's wrong-code budget cannot be reset by the client: it keys on a browser id
// the server issued and signed (a cookie the client makes up is not taken) and on the real client
// address (CAIRN_TRUSTED_PROXY_HOPS). Forging the cookie and rotating X-Forwarded-For on every
// guess still ends in 429 within the per-address budget; one browser keeping its cookie hits its
// own, smaller budget first. From outside over HTTP.
import { randomBytes, randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { userCodeAlphabet } from '../../src/domain/oauth/user-code.ts';
import { userCodeLimits } from '../../src/domain/oauth/limits.ts';
import { useWeb } from '../support/harness.ts';

// One router in front, as on Heroku: the last X-Forwarded-For entry is the client.
const stack = useWeb({}, { CAIRN_TRUSTED_PROXY_HOPS: '1' });

/** A well-formed code that names no request: a miss that counts. */
const wrongCode = () => Array.from({ length: 8 }, () => userCodeAlphabet[randomInt(userCodeAlphabet.length)]).join('');
const fakeAddress = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(256)}`;

async function guess(headers: Record<string, string>): Promise<Response> {
  return fetch(`${stack.web.url}/device?user_code=${wrongCode()}`, { headers, redirect: 'manual' });
}

describe('the /device wrong-code budget', () => {
  it('holds when every guess forges its browser cookie and rotates X-Forwarded-For before the real address', async () => {
    const real = '203.0.113.44';
    let refusedAt: number | undefined;
    for (let i = 0; i < userCodeLimits.ip.points + 5; i++) {
      const res = await guess({
        cookie: `cairn_portal_browser=${randomBytes(18).toString('base64url')}.${randomBytes(16).toString('base64url').slice(0, 22)}`,
        'x-forwarded-for': `${fakeAddress()}, ${fakeAddress()}, ${real}`,
      });
      if (res.status === 429) {
        refusedAt = i;
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        break;
      }
      expect(res.status).toBe(404);
    }
    expect(refusedAt).toBe(userCodeLimits.ip.points);
  });

  it('keys one browser on the id the server issued it, whatever address it comes from', async () => {
    const first = await guess({ 'x-forwarded-for': '198.51.100.1' });
    expect(first.status).toBe(404);
    const issued = /cairn_portal_browser=([^;]+)/.exec(first.headers.get('set-cookie') ?? '')?.[1];
    expect(issued).toMatch(/^[A-Za-z0-9_-]{24}\.[A-Za-z0-9_-]{22}$/);
    let refusedAt: number | undefined;
    for (let i = 1; i < userCodeLimits.browser.points + 5; i++) {
      const res = await guess({ cookie: `cairn_portal_browser=${issued}`, 'x-forwarded-for': `198.51.100.${i + 1}` });
      if (res.status === 429) {
        refusedAt = i;
        break;
      }
      expect(res.status).toBe(404);
    }
    expect(refusedAt).toBe(userCodeLimits.browser.points);
  });
});
