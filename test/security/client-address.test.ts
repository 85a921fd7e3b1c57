// Every per-address limit keys on the real client, never on what the client writes: with one
// trusted router in front (CAIRN_TRUSTED_PROXY_HOPS=1, Heroku's), the client is the LAST
// X-Forwarded-For entry (the router appends it); whatever the client puts left of it changes
// nothing. With 0 hops no header is trusted at all (the socket address); with 2, the second from
// the right. Checked from outside over HTTP on password reset (20 per address per 10 minutes).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import { testConfig } from '../support/config.ts';
import { call, createHarness, createTestEnv, type Harness } from '../support/harness.ts';

let h: Harness;
let env: CreatedEnv;
const webs: WebHandle[] = [];

// Not useWeb(): the tests start one web per trusted proxy-hop count on this database.
beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  for (const w of webs) await w.stop();
  await h?.close();
});

async function web(hops: number): Promise<WebHandle> {
  const w = await startWeb(testConfig(h.database.url, { CAIRN_TRUSTED_PROXY_HOPS: String(hops) }), {
    host: '127.0.0.1',
    port: 0,
  });
  webs.push(w);
  return w;
}

const fake = () => `${10 + (randomBytes(1)[0]! % 200)}.${randomBytes(1)[0]}.${randomBytes(1)[0]}.${randomBytes(1)[0]}`;

/** Password-reset requests until one is refused; answers how many were accepted. */
async function acceptedUntilLimited(w: WebHandle, forwardedFor: () => string | undefined): Promise<number> {
  for (let i = 0; i < 60; i++) {
    const xff = forwardedFor();
    const res = await call(w.url, 'POST', '/v1/client/password-reset', {
      body: { email: `someone-${i}@example.com` },
      headers: { 'cairn-publishable-key': env.publishableKey, ...(xff ? { 'x-forwarded-for': xff } : {}) },
    });
    if (res.status === 429) {
      expect(res.body).toMatchObject({ code: 'rate_limited' });
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      return i;
    }
    expect(res.status).toBe(202);
  }
  return Infinity;
}

describe('the client address', () => {
  it('is the last X-Forwarded-For entry with one router in front: rotating the entries before it resets nothing', async () => {
    const w = await web(1);
    const real = '203.0.113.7';
    expect(await acceptedUntilLimited(w, () => `${fake()}, ${fake()}, ${real}`)).toBe(20);
    // Another real client is not affected.
    expect(
      (
        await call(w.url, 'POST', '/v1/client/password-reset', {
          body: { email: 'x@example.com' },
          headers: { 'cairn-publishable-key': env.publishableKey, 'x-forwarded-for': `${real}, 203.0.113.8` },
        })
      ).status,
    ).toBe(202);
  });

  it('is the socket address with no proxy trusted: any X-Forwarded-For is ignored', async () => {
    const w = await web(0);
    expect(await acceptedUntilLimited(w, () => fake())).toBe(20);
  });

  it('is the second entry from the right behind two proxies', async () => {
    const w = await web(2);
    const real = '198.51.100.23';
    expect(await acceptedUntilLimited(w, () => `${fake()}, ${real}, ${fake()}`)).toBe(20);
  });
});
