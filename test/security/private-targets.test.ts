// Test environments must not reach the service's own network either. A test key is handed out as
// freely as a live one, so on a production deployment (NODE_ENV=production, or
// CAIRN_PRIVATE_TARGETS=deny) a test environment's webhook endpoint or social provider may not
// name loopback, private or link-local addresses: its Postgres, its object store, cloud metadata,
// the web itself. Otherwise the deliveries list tells those services apart by how each attempt
// failed (reset, 400, 403, 404, refused): a blind request forgery with an oracle. Refused at
// creation and update (400 naming the switch), and again where each connection opens, so an
// endpoint stored while private targets were allowed reaches nothing once they are not, and its
// attempts all read the same. Development (`npm start`, these tests) keeps local receivers.
// A name that does not resolve is refused in the very same words as a private address, at set-up
// and at delivery: the service's internal names (postgres, s3, metadata.google.internal) resolve
// only inside its network, so any difference would tell a key holder which of them exist.
import { createServer, type AddressInfo, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { startWeb, type WebHandle } from '../../src/server.ts';
import { testConfig } from '../support/config.ts';
import { call, createHarness, createTestEnv, startTestWeb, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { spawnWeb, spawnWorker, type WebProcess } from '../support/web-process.ts';

let h: Harness;
/** NODE_ENV=test, switch unset: private targets allowed (development, and every other test). */
let devWeb: WebHandle;
/** NODE_ENV=production, switch unset, as a real process: denied by default. */
let prodWeb: WebProcess;
/** NODE_ENV=test with CAIRN_PRIVATE_TARGETS=deny. */
let denyWeb: WebHandle;
/** NODE_ENV=production with CAIRN_PRIVATE_TARGETS=allow: the operator's choice wins. */
let allowWeb: WebHandle;
const traps: Server[] = [];
let connections = 0;
let trap4 = 0;
let trap6 = 0;

/** A loopback port that counts every connection: nothing refused may ever reach it. */
async function trap(host: string): Promise<number> {
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  traps.push(server);
  return (server.address() as AddressInfo).port;
}

// Not useWeb(): four webs with different CAIRN_PRIVATE_TARGETS and NODE_ENV (one a child process) share this database.
beforeAll(async () => {
  h = await createHarness();
  const local = { host: '127.0.0.1', port: 0 };
  [devWeb, prodWeb, denyWeb, allowWeb, trap4, trap6] = await Promise.all([
    startTestWeb(h),
    spawnWeb(h.database.url, { NODE_ENV: 'production' }),
    startWeb(testConfig(h.database.url, { CAIRN_PRIVATE_TARGETS: 'deny' }), local),
    startWeb(testConfig(h.database.url, { NODE_ENV: 'production', CAIRN_PRIVATE_TARGETS: 'allow' }), local),
    trap('127.0.0.1'),
    trap('::1'),
  ]);
});
afterAll(async () => {
  await Promise.all([devWeb?.stop(), prodWeb?.stop(), denyWeb?.stop(), allowWeb?.stop()]);
  await Promise.all(traps.map((t) => new Promise((r) => t.close(r))));
  await h?.close();
});

/** The service's own neighbours on loopback: its Postgres, its object store, the web itself. */
function internalUrls(): string[] {
  const pgPort = new URL(h.database.url).port || '5432';
  return [
    `http://127.0.0.1:${trap4}/hook`,
    `http://[::1]:${trap6}/hook`,
    `http://[::ffff:127.0.0.1]:${trap4}/hook`,
    `http://127.0.0.1:${pgPort}/`,
    `${h.config.AWS_ENDPOINT_URL_S3 ?? 'http://127.0.0.1:7480'}/cairn-backups`,
    `${devWeb.url}/v1/openapi.json`,
  ];
}

/** Everything a test environment may not name under deny: loopback by number and by name, metadata, private ranges. */
function privateUrls(): string[] {
  return [
    ...internalUrls(),
    `https://127.0.0.1:${trap4}/hook`,
    `http://localhost:${trap4}/hook`, // a name that resolves to loopback
    `http://localhost.:${trap4}/hook`,
    'http://169.254.169.254/latest/meta-data/', // cloud metadata
    'http://10.0.0.5/hook',
    'http://192.168.1.1/hook',
    'http://100.64.0.1/hook',
    'http://[fd00::1]/hook',
    `http://0.0.0.0:${trap4}/hook`,
  ];
}

/** Never resolves (RFC 6761 §6.4): a name the service's DNS does not know. */
const unresolvable = 'http://cairn-no-such-host.invalid/';
/** What a refusal may never contain: the host, its address, a port, whether the name resolved. */
const namesTarget = /cairn-no-such-host|127\.0\.0\.1|::1|::ffff|localhost|\d{4,5}|does not resolve|resolves to/;

/**
 * The answers to one request per target of `unresolvable`, a private literal and a private name:
 * all 400, byte for byte the same but for the request id, naming none of them; the first, parsed.
 */
async function oneAnswer(send: (target: string) => Promise<Response>): Promise<Record<string, unknown>> {
  const bodies: string[] = [];
  for (const target of [unresolvable, `http://127.0.0.1:${trap4}/`, `http://localhost:${trap4}/`]) {
    const res = await send(target);
    expect({ target, status: res.status }).toEqual({ target, status: 400 });
    bodies.push((await res.text()).replace(/"request_id":"[^"]*"/, '"request_id":""'));
  }
  expect(bodies[1]).toBe(bodies[0]);
  expect(bodies[2]).toBe(bodies[0]);
  expect(bodies[0]).not.toMatch(namesTarget);
  return JSON.parse(bodies[0]!) as Record<string, unknown>;
}

/** A JSON request with the environment's secret key. */
const send = (base: string, env: CreatedEnv, method: string, path: string, body: unknown) =>
  fetch(`${base}/v1/${env.env.name}${path}`, {
    method,
    headers: { authorization: `Bearer ${env.secretKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const api = (base: string, env: CreatedEnv) => (method: string, path: string, body?: unknown) =>
  call(base, method, `/v1/${env.env.name}${path}`, { key: env.secretKey, ...(body === undefined ? {} : { body }) });

const countEndpoints = async (env: CreatedEnv) =>
  Number((await h.db('webhook_endpoints').where({ env_id: env.env.id }).count({ n: '*' }))[0]!.n);

describe('webhook endpoints of a test environment', () => {
  it('under NODE_ENV=production are refused at creation when they name a private address, naming the switch', async () => {
    const env = await createTestEnv(h.db);
    const prod = api(prodWeb.url, env);
    for (const url of privateUrls()) {
      const res = await prod('POST', '/webhook_endpoints', { url, event_types: ['*'] });
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expect(res.body).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining('CAIRN_PRIVATE_TARGETS=deny'),
        details: { reason: 'url_not_allowed' },
      });
    }
    expect(await countEndpoints(env)).toBe(0);
    // A public address stays open to test environments, over http too.
    expect(
      (await prod('POST', '/webhook_endpoints', { url: 'http://93.184.215.14/hook', event_types: ['*'] })).status,
    ).toBe(201);
    expect(connections).toBe(0);
  });

  it('under NODE_ENV=production may not be moved to a private address by PATCH', async () => {
    const env = await createTestEnv(h.db);
    const prod = api(prodWeb.url, env);
    const made = await prod('POST', '/webhook_endpoints', { url: 'https://93.184.215.14/hook', event_types: ['*'] });
    expect(made.status).toBe(201);
    const id = made.body.id as string;
    for (const url of privateUrls()) {
      const res = await prod('PATCH', `/webhook_endpoints/${id}`, { url });
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
      expect(res.body).toMatchObject({ message: expect.stringContaining('CAIRN_PRIVATE_TARGETS') });
    }
    expect((await prod('GET', `/webhook_endpoints/${id}`)).body).toMatchObject({ url: 'https://93.184.215.14/hook' });
    expect(connections).toBe(0);
  });

  it('follow the switch over the default: deny refuses them in development, allow accepts them in production', async () => {
    const denied = await createTestEnv(h.db);
    for (const url of internalUrls()) {
      const res = await api(denyWeb.url, denied)('POST', '/webhook_endpoints', { url, event_types: ['*'] });
      expect({ url, status: res.status }).toEqual({ url, status: 400 });
    }
    expect(await countEndpoints(denied)).toBe(0);
    // Development (npm start, NODE_ENV unset or test) keeps its local receivers by default.
    for (const web of [allowWeb, devWeb]) {
      const env = await createTestEnv(h.db);
      for (const url of privateUrls()) {
        const res = await api(web.url, env)('POST', '/webhook_endpoints', { url, event_types: ['*'] });
        expect({ url, status: res.status }).toEqual({ url, status: 201 });
      }
    }
    expect(connections).toBe(0);
  });

  it('under deny are refused at creation in the same words whether the name does not resolve or is private', async () => {
    const env = await createTestEnv(h.db);
    for (const web of [denyWeb.url, prodWeb.url]) {
      const body = { event_types: ['*'] };
      const answer = await oneAnswer((url) => send(web, env, 'POST', '/webhook_endpoints', { ...body, url }));
      // Still says which rule refused it, and who sets it.
      expect(answer).toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(/public addresses.*CAIRN_PRIVATE_TARGETS=deny/),
        details: { reason: 'url_not_allowed' },
      });
    }
    expect(await countEndpoints(env)).toBe(0);
    expect(connections).toBe(0);
  });

  it('stored while allowed, are never called once a worker runs under NODE_ENV=production, and fail alike', async () => {
    const env = await createTestEnv(h.db);
    const dev = api(devWeb.url, env);
    const ids: string[] = [];
    // A name that does not resolve fails in the same words as the private addresses.
    for (const url of [...internalUrls(), unresolvable]) {
      const res = await dev('POST', '/webhook_endpoints', { url, event_types: ['end_user.created'] });
      expect(res.status).toBe(201);
      ids.push(res.body.id as string);
    }
    // The worker restarted with the production default: deliveries must be refused where each
    // connection would open, with one reason for all, naming neither host nor address.
    const worker = await spawnWorker(h.database.url, { NODE_ENV: 'production' });
    try {
      expect((await dev('POST', '/end_users', { email: 'private-targets@example.com' })).status).toBe(201);
      type Attempt = { error?: string; status_code?: number };
      const firsts: Attempt[] = [];
      for (const id of ids) {
        firsts.push(
          await eventually(
            async () => {
              const res = await dev('GET', `/webhook_endpoints/${id}/deliveries`);
              const deliveries = res.body.deliveries as { attempts: Attempt[] }[];
              return deliveries[0]?.attempts[0];
            },
            { timeoutMs: 60_000, intervalMs: 200 },
          ),
        );
      }
      for (const attempt of firsts) {
        expect(attempt).not.toHaveProperty('status_code');
        expect(attempt.error).toMatch(/^refused: .*CAIRN_PRIVATE_TARGETS=deny/);
        expect(attempt.error).not.toMatch(namesTarget);
      }
      expect(new Set(firsts.map((a) => a.error)).size).toBe(1);
      expect(connections).toBe(0);
    } finally {
      await worker.stop();
    }
  });
});

describe('social providers of a test environment', () => {
  const put = (base: string, env: CreatedEnv, provider: string, body: Record<string, unknown>) =>
    call(base, 'PUT', `/v1/${env.env.name}/social_providers/${provider}`, { key: env.secretKey, body });

  it('under NODE_ENV=production may not name a private issuer or endpoint, naming the switch', async () => {
    const env = await createTestEnv(h.db);
    for (const url of privateUrls()) {
      const google = await put(prodWeb.url, env, 'google', { client_id: 'g', client_secret: 's', issuer: url });
      expect({ url, status: google.status }).toEqual({ url, status: 400 });
      expect(google.body).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining('CAIRN_PRIVATE_TARGETS=deny'),
        details: { reason: 'endpoint_not_allowed', field: 'issuer' },
      });
      const github = await put(prodWeb.url, env, 'github', {
        client_id: 'gh',
        client_secret: 's',
        authorization_endpoint: 'http://93.184.215.14/authorize',
        token_endpoint: url,
      });
      expect({ url, status: github.status }).toEqual({ url, status: 400 });
      expect(github.body).toMatchObject({ details: { reason: 'endpoint_not_allowed', field: 'token_endpoint' } });
    }
    expect(await h.db('social_providers').where({ env_id: env.env.id })).toEqual([]);
    // Where private targets are allowed the same issuer is accepted (a local identity provider).
    for (const web of [devWeb, allowWeb])
      expect(
        (await put(web.url, env, 'google', { client_id: 'g', client_secret: 's', issuer: `http://127.0.0.1:${trap4}` }))
          .status,
      ).toBe(200);
    expect(connections).toBe(0);
  });

  it('under deny are refused in the same words whether the name does not resolve or is private', async () => {
    const env = await createTestEnv(h.db);
    for (const web of [denyWeb.url, prodWeb.url]) {
      const body = { client_id: 'g', client_secret: 's' };
      const answer = await oneAnswer((issuer) =>
        send(web, env, 'PUT', '/social_providers/google', { ...body, issuer }),
      );
      expect(answer).toMatchObject({
        message: expect.stringMatching(/public addresses.*CAIRN_PRIVATE_TARGETS=deny/),
        details: { reason: 'endpoint_not_allowed', field: 'issuer' },
      });
    }
    expect(await h.db('social_providers').where({ env_id: env.env.id })).toEqual([]);
  });

  it('stored while allowed, fail sign-ins in the same words whether the name does not resolve or is private', async () => {
    const env = await createTestEnv(h.db);
    expect(
      (await put(devWeb.url, env, 'google', { client_id: 'g', client_secret: 's', issuer: 'http://93.184.215.14' }))
        .status,
    ).toBe(200);
    const q = new URLSearchParams({ publishable_key: env.publishableKey, redirect_url: 'http://localhost:5173/done' });
    const answer = await oneAnswer(async (issuer) => {
      await h.db('social_providers').where({ env_id: env.env.id, provider: 'google' }).update({ issuer });
      return fetch(`${prodWeb.url}/v1/client/oauth/google/start?${q}`, { redirect: 'manual' });
    });
    expect(answer).toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining('CAIRN_PRIVATE_TARGETS=deny'),
      details: { reason: 'endpoint_not_allowed' },
    });
    expect(connections).toBe(0);
  });

  it('under NODE_ENV=production never connects to a private address a stored setting names', async () => {
    const env = await createTestEnv(h.db);
    // Set up while allowed, as before the switch was turned to deny.
    expect(
      (await put(devWeb.url, env, 'google', { client_id: 'g', client_secret: 's', issuer: 'http://93.184.215.14' }))
        .status,
    ).toBe(200);
    for (const issuer of [`http://127.0.0.1:${trap4}`, `http://localhost:${trap4}`, `http://[::1]:${trap6}`]) {
      await h.db('social_providers').where({ env_id: env.env.id, provider: 'google' }).update({ issuer });
      const q = new URLSearchParams({
        publishable_key: env.publishableKey,
        redirect_url: 'http://localhost:5173/done',
      });
      const res = await fetch(`${prodWeb.url}/v1/client/oauth/google/start?${q}`, { redirect: 'manual' });
      expect({ issuer, status: res.status }).toEqual({ issuer, status: 400 });
      expect(await res.json()).toMatchObject({
        code: 'invalid_request',
        message: expect.stringContaining('CAIRN_PRIVATE_TARGETS'),
        details: { reason: 'endpoint_not_allowed' },
      });
    }
    expect(connections).toBe(0);
  });
});
