// URLs the service itself fetches, from outside over HTTP. An environment's own social provider
// names an issuer, endpoints and an API base that the web process then calls; a live
// environment's key holder must not reach the service's own network that way (cloud metadata,
// the database, internal ports). Live: https to public addresses only, checked when the provider
// is set up and again where each socket connects (a name that later resolves to 127.0.0.1, or an
// address a discovery document names, gets nowhere). Test environments keep http, and local
// addresses where the operator allows private targets (development against a local identity
// provider; private-targets.test.ts has the switch, CAIRN_PRIVATE_TARGETS).
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server } from 'node:net';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerMaxBytes, guardedFetch, isPublicAddress } from '../../src/domain/social/egress.ts';
import { deadlineResolver, hostRefused, type Resolver } from '../../src/egress/addresses.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import type { WebHandle } from '../../src/server.ts';
import { call, createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';

let h: Harness;
let web: WebHandle;
let live: CreatedEnv;
let trap: Server;
let trapPort: number;
let connections = 0;

const stack = useWeb({ atBaseUrl: true });
beforeAll(async () => {
  ({ h, web } = stack);
  live = await createTestEnv(h.db, `orgs/sec-outbound/projects/p${process.pid}/envs/live`, 'live');
  // A port nothing should ever connect to from a live environment's sign-in.
  trap = createTcpServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((r) => trap.listen(0, '127.0.0.1', r));
  trapPort = (trap.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => trap?.close(r));
});

const putProvider = (env: CreatedEnv, provider: string, body: Record<string, unknown>) =>
  call(web.url, 'PUT', `/v1/${env.env.name}/social_providers/${provider}`, { key: env.secretKey, body });

describe('setting up a provider', () => {
  it('a live environment takes only https addresses that resolve to public ones', async () => {
    const refused = [
      `http://127.0.0.1:${trapPort}`,
      'https://127.0.0.1',
      'https://localhost',
      'https://169.254.169.254/latest',
      'https://10.1.2.3',
      'https://[::1]',
      'https://[::ffff:127.0.0.1]',
      'https://100.64.0.1',
      'https://[fd00::1]',
      'https://0.0.0.0',
      'https://does-not-resolve.invalid',
      'http://8.8.8.8',
    ];
    for (const url of refused) {
      const github = await putProvider(live, 'github', {
        client_id: 'gh',
        client_secret: 's',
        authorization_endpoint: 'https://8.8.8.8/authorize',
        token_endpoint: 'https://8.8.8.8/token',
        api_base_url: url,
      });
      expect({ url, status: github.status }).toEqual({ url, status: 400 });
      expect(github.body).toMatchObject({
        code: 'invalid_request',
        details: { reason: 'endpoint_not_allowed', field: 'api_base_url' },
      });
      // Every refused host in the same words, resolving or not: they cannot map internal names.
      if (url.startsWith('https:'))
        expect(github.body.message).toBe(
          `api_base_url is not allowed: ${hostRefused}; a live environment reaches only public addresses, over https`,
        );
      const google = await putProvider(live, 'google', { client_id: 'g', client_secret: 's', issuer: url });
      expect({ url, status: google.status }).toEqual({ url, status: 400 });
    }
    expect(
      (await putProvider(live, 'google', { client_id: 'g', client_secret: 's', issuer: 'https://8.8.8.8' })).status,
    ).toBe(200);
  });

  it('a test environment may use a local provider over http', async () => {
    const env = await createTestEnv(h.db);
    expect(
      (await putProvider(env, 'google', { client_id: 'g', client_secret: 's', issuer: `http://127.0.0.1:${trapPort}` }))
        .status,
    ).toBe(200);
  });
});

describe('signing in', () => {
  it('never connects from a live environment to an address that is not public, whatever the stored settings say', async () => {
    expect(
      (await putProvider(live, 'google', { client_id: 'g', client_secret: 's', issuer: 'https://8.8.8.8' })).status,
    ).toBe(200);
    // As settings stored before the rule, or a name whose address changed since, would hold them.
    for (const issuer of [
      `https://localhost:${trapPort}`,
      `https://127.0.0.1:${trapPort}`,
      `http://127.0.0.1:${trapPort}`,
    ]) {
      await h.db('social_providers').where({ env_id: live.env.id, provider: 'google' }).update({ issuer });
      const q = new URLSearchParams({
        publishable_key: live.publishableKey,
        redirect_url: `${h.config.CAIRN_BASE_URL}/signed-in`,
      });
      const res = await fetch(`${web.url}/v1/client/oauth/google/start?${q}`, { redirect: 'manual' });
      expect({ issuer, status: res.status }).toEqual({ issuer, status: 400 });
      expect(await res.json()).toMatchObject({ code: 'invalid_request', details: { reason: 'endpoint_not_allowed' } });
    }
    expect(connections).toBe(0);
  });
});

describe('the guarded fetch', () => {
  // Its DNS has a deadline and reads no /etc/hosts: the tests' certificate names localhost, so they
  // answer that name themselves, as /etc/hosts would.
  const hostsDns: Resolver = async (host) => (host === 'localhost' ? ['127.0.0.1'] : deadlineResolver(host));
  let tls: HttpsServer;
  let port: number;
  let posted = '';
  const ca = readFileSync(new URL('./fixtures/tls-cert.pem', import.meta.url), 'utf8');

  beforeAll(async () => {
    tls = createHttpsServer(
      { cert: ca, key: readFileSync(new URL('./fixtures/tls-key.pem', import.meta.url)) },
      (req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          const issuer = `https://localhost:${port}`;
          if (req.url === '/.well-known/openid-configuration') {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(
              JSON.stringify({
                issuer,
                authorization_endpoint: `${issuer}/authorize`,
                token_endpoint: `${issuer}/token`,
                jwks_uri: `${issuer}/jwks`,
              }),
            );
          } else if (req.method === 'POST') {
            posted = `${req.headers['content-type']} ${body}`;
            res.writeHead(201, { 'set-cookie': ['a=1', 'b=2'] });
            res.end('created');
          } else {
            res.writeHead(204);
            res.end();
          }
        });
      },
    );
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    port = (tls.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((r) => tls?.close(r));
  });

  it('answers like fetch where the address is allowed (openid-client discovery runs through it)', async () => {
    const trusting = guardedFetch(() => true, { ca, resolve: hostsDns });
    const found = await oidc.discovery(new URL(`https://localhost:${port}`), 'client', undefined, oidc.None(), {
      [oidc.customFetch]: trusting,
    });
    expect(found.serverMetadata().token_endpoint).toBe(`https://localhost:${port}/token`);
    const created = await trusting(`https://localhost:${port}/token`, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'x', code: 'a b' }),
    });
    expect(created.status).toBe(201);
    expect(await created.text()).toBe('created');
    expect(created.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(posted).toBe('application/x-www-form-urlencoded;charset=UTF-8 grant_type=x&code=a+b');
    expect((await trusting(`https://127.0.0.1:${port}/nothing`)).status).toBe(204);
  });

  it('refuses plain http, and local addresses by name or number, before connecting', async () => {
    const publicOnly = guardedFetch(isPublicAddress, { ca, resolve: hostsDns });
    for (const url of [`https://localhost:${port}/x`, `https://127.0.0.1:${port}/x`]) {
      await expect(publicOnly(url)).rejects.toThrow(hostRefused);
    }
    await expect(publicOnly('http://8.8.8.8/x')).rejects.toThrow(/only https/);
    // A name that does not resolve, with the service's own DNS, reads as a private one.
    await expect(guardedFetch(isPublicAddress)('https://cairn-no-such-host.invalid/x')).rejects.toThrow(hostRefused);
    expect(['8.8.8.8', '2606:4700:4700::1111'].map(isPublicAddress)).toEqual([true, true]);
    expect(
      [
        '127.0.0.1',
        '10.0.0.1',
        '172.16.5.4',
        '192.168.1.1',
        '169.254.169.254',
        '100.64.1.1',
        '0.0.0.0',
        '224.0.0.1',
        '::1',
        '::',
        'fe80::1',
        'fd12::1',
        '::ffff:10.0.0.1',
        '64:ff9b::a00:1',
        'not an ip',
      ].filter(isPublicAddress),
    ).toEqual([]);
  });

  it('takes plain http where the rule allows it (test environments), still refusing local addresses', async () => {
    const publicHttp = guardedFetch(isPublicAddress, { httpsOnly: false, resolve: hostsDns });
    for (const url of [
      `http://localhost:${trapPort}/x`,
      `http://127.0.0.1:${trapPort}/x`,
      `http://[::ffff:127.0.0.1]:${trapPort}/x`,
      'ftp://8.8.8.8/x',
    ]) {
      await expect(publicHttp(url)).rejects.toThrow(url.startsWith('ftp:') ? /is not allowed/ : hostRefused);
    }
    expect(connections).toBe(0);
    const plain = createHttpServer((_req, res) => res.writeHead(204).end());
    await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
    try {
      const anyHttp = guardedFetch(() => true, { httpsOnly: false, resolve: hostsDns });
      expect((await anyHttp(`http://localhost:${(plain.address() as AddressInfo).port}/x`)).status).toBe(204);
    } finally {
      await new Promise((r) => plain.close(r));
    }
  });

  it("stops reading a provider's answer past 1 MiB: one that never ends holds no memory of the web's", async () => {
    let sent = 0;
    let closed = false;
    const endless = createHttpServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const more = () => {
        while (!closed && sent < 64 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        res.end();
      };
      res.on('close', () => (closed = true));
      more();
    });
    await new Promise<void>((r) => endless.listen(0, '127.0.0.1', r));
    try {
      const anyHttp = guardedFetch(() => true, { httpsOnly: false });
      const res = await anyHttp(
        `http://127.0.0.1:${(endless.address() as AddressInfo).port}/.well-known/openid-configuration`,
      );
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
      await eventually(() => closed);
      // The provider got to write little more than the limit and what the sockets buffer.
      expect(sent).toBeLessThan(answerMaxBytes + 8 * 1024 * 1024);
    } finally {
      endless.closeAllConnections();
      await new Promise((r) => endless.close(r));
    }
  });
});
