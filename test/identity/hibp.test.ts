// The optional HIBP range API source against a local stand-in of the API: padding ignored, the
// prefix cache, a timeout, and the environment's explicit fail-open / fail-closed choice.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha1Hex } from '../../src/domain/identity/breached/format.ts';
import { createHibpClient, useHibpClient } from '../../src/domain/identity/breached/hibp.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';

const listed = 'only the api knows this one 1';
const padded = 'padding entry, count zero 22';
let api: Server;
let apiUrl: string;
const requests: { path: string; padding: string | undefined }[] = [];
let answer: 'ok' | 'hang' | 'error' = 'ok';

let h: Harness;
let web: WebHandle;
let env: CreatedEnv;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  api = createServer((req, res) => {
    requests.push({ path: req.url ?? '', padding: req.headers['add-padding'] as string | undefined });
    if (answer === 'hang') return; // never answers: the client's timeout must fire
    if (answer === 'error') return void res.writeHead(503).end();
    const prefix = (req.url ?? '').slice(-5);
    const lines = [listed, padded]
      .map(sha1Hex)
      .filter((d) => d.startsWith(prefix))
      .map((d) => `${d.slice(5)}:${d === sha1Hex(padded) ? 0 : 12}`);
    res.end([...lines, `${'0'.repeat(35)}:0`].join('\r\n'));
  });
  api.listen(0, '127.0.0.1');
  await once(api, 'listening');
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  env = await createTestEnv(h.db);
});
afterAll(async () => {
  useHibpClient(undefined);
  api?.closeAllConnections();
  await new Promise((r) => api?.close(r));
});

describe('HIBP range client', () => {
  it('finds listed digests, ignores padding, sends only the prefix with Add-Padding, caches', async () => {
    const client = createHibpClient({ baseUrl: apiUrl });
    requests.length = 0;
    expect(await client.contains(sha1Hex(listed))).toBe(true);
    expect(await client.contains(sha1Hex(padded))).toBe(false);
    expect(await client.contains(sha1Hex(listed))).toBe(true);
    expect(requests.map((r) => r.path)).toEqual([
      ...new Set([listed, padded].map((p) => `/range/${sha1Hex(p).slice(0, 5)}`)),
    ]);
    expect(requests.every((r) => r.padding === 'true')).toBe(true);
  });

  it('gives up after its timeout with store_unavailable', async () => {
    answer = 'hang';
    try {
      await expect(
        createHibpClient({ baseUrl: apiUrl, timeoutMs: 200 }).contains(sha1Hex(listed)),
      ).rejects.toMatchObject({ code: 'store_unavailable' });
    } finally {
      answer = 'ok';
    }
  });
});

describe('an environment with the API turned on', () => {
  const setApi = (fail: 'open' | 'closed') =>
    call(web.url, 'PUT', `/v1/${env.env.name}/identity_settings`, {
      key: env.secretKey,
      body: { breached_api: { enabled: true, fail } },
    });
  const create = (email: string, password: string) =>
    call(web.url, 'POST', `/v1/${env.env.name}/end_users`, { key: env.secretKey, body: { email, password } });

  it('refuses a password only the API lists; fails closed with 503, or open, as chosen', async () => {
    useHibpClient(createHibpClient({ baseUrl: apiUrl, cacheSeconds: 0 }));
    expect((await setApi('closed')).status).toBe(200);
    expect(await create('a@example.com', listed)).toMatchObject({
      status: 400,
      body: { details: { reason: 'breached_password' } },
    });
    expect((await create('b@example.com', 'a password nobody listed 333')).status).toBe(201);
    answer = 'error';
    try {
      const closed = await create('c@example.com', 'another unlisted passphrase 4');
      expect(closed).toMatchObject({ status: 503, body: { code: 'store_unavailable' } });
      expect(closed.headers.get('retry-after')).toBe('5');
      expect((await setApi('open')).status).toBe(200);
      expect((await create('c@example.com', 'another unlisted passphrase 4')).status).toBe(201);
    } finally {
      answer = 'ok';
    }
  });
});
