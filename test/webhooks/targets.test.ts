// No server-side request forgery through webhooks: a live environment's endpoint must be https on
// public addresses, refused at creation and update, and again where each attempt opens its socket
// (after DNS resolution: a name that rebinds to 127.0.0.1 reaches nothing). Test environments may
// use http, and local addresses where the operator allows private targets (CAIRN_PRIVATE_TARGETS,
// allowed outside production: development); test/security/private-targets.test.ts has the switch.
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEndpoint } from '../../src/domain/webhooks/endpoints/endpoints.ts';
import { createSender } from '../../src/domain/webhooks/deliveries/send.ts';
import { checkTarget } from '../../src/domain/webhooks/endpoints/targets.ts';
import { deadlineResolver, hostRefused, type Resolver } from '../../src/egress/addresses.ts';
import { targetRule } from '../../src/egress/target-rule.ts';
import type { WebHandle } from '../../src/server.ts';
import type { WorkerHandle } from '../../src/worker.ts';
import { AppError } from '../../src/app-error.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { apiFor, startReceiver, startWebhookWorker } from './support.ts';
import { eventually } from '../support/probes.ts';

const refusedUrls = [
  'http://example.com/hook', // not https
  'https://127.0.0.1/hook',
  'https://127.1.2.3:8443/hook',
  'https://localhost/hook', // resolves to loopback
  'https://[::1]/hook',
  'https://10.0.0.5/hook',
  'https://172.16.3.4/hook',
  'https://192.168.1.1/hook',
  'https://169.254.169.254/latest/meta-data/', // cloud metadata
  'https://[fe80::1]/hook',
  'https://100.64.0.1/hook', // CGNAT
  'https://0.0.0.0/hook',
  'https://224.0.0.1/hook', // multicast
  'https://[ff02::1]/hook',
  'https://[fc00::1]/hook',
  'https://[::ffff:127.0.0.1]/hook', // IPv4-mapped loopback
  'https://[::ffff:a9fe:a9fe]/hook', // IPv4-mapped metadata
  'https://[64:ff9b::7f00:1]/hook', // NAT64 of loopback
  'https://[::127.0.0.1]/hook', // IPv4-compatible loopback
  'https://[::ffff:0:7f00:1]/hook', // SIIT loopback
  'https://[fec0::1]/hook', // site-local
  'https://[2001::1]/hook', // Teredo
  'https://no-such-host.invalid/hook', // does not resolve
  'https://2130706433/hook', // 127.0.0.1 as one number: the URL parser makes it 127.0.0.1
];

/** A DNS for the tests: these names answer what the test says, the rest the system's answer. */
const names: Record<string, string[]> = {
  'hooks.example-public.test': ['93.184.215.14'],
  'mixed.example.test': ['93.184.215.14', '10.0.0.1'],
};
const fakeDns: Resolver = async (host) => names[host] ?? deadlineResolver(host);
const live = targetRule({ NODE_ENV: 'test' }, 'live');
const test = targetRule({ NODE_ENV: 'test' }, 'test');
const testDenied = targetRule({ NODE_ENV: 'production' }, 'test');

describe('checkTarget (the rule at creation)', () => {
  it.each(refusedUrls)('a live environment refuses %s', async (url) => {
    const err = await checkTarget(url, live, fakeDns).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({ code: 'invalid_request', details: { reason: 'url_not_allowed' } });
  });

  it('a live environment accepts https on a public address, and a name whose every address is public', async () => {
    await expect(checkTarget('https://93.184.215.14/hook', live, fakeDns)).resolves.toBe('https://93.184.215.14/hook');
    await expect(checkTarget('https://hooks.example-public.test/x?y=1', live, fakeDns)).resolves.toBe(
      'https://hooks.example-public.test/x?y=1',
    );
    // One private address among public ones is enough to refuse.
    await expect(checkTarget('https://mixed.example.test/', live, fakeDns)).rejects.toThrow(hostRefused);
  });

  it('refuses a name that does not resolve, or whose DNS fails, in the words of a private address', async () => {
    // A SERVFAIL or a timeout reads the same: the answer must not tell names that exist from others.
    const failing: Resolver = async () => {
      throw Object.assign(new Error('queryA ESERVFAIL internal.example.test'), { code: 'ESERVFAIL' });
    };
    const refusal = (url: string, dns: Resolver = fakeDns) => checkTarget(url, live, dns).catch((e: unknown) => e);
    const private_ = (await refusal('https://127.0.0.1/hook')) as AppError;
    expect(private_.message).toBe(`url is not allowed: ${hostRefused}; ${live.because}`);
    for (const err of [
      await refusal('https://no-such-host.invalid/hook'),
      await refusal('https://internal.example.test/hook', failing),
      await refusal('https://mixed.example.test/hook'),
    ])
      expect(err).toMatchObject({ code: 'invalid_request', message: private_.message, details: private_.details });
    // At delivery too: a failed attempt (retried like any), its error naming neither host nor cause.
    const sender = createSender({ resolve: failing });
    try {
      const outcome = await sender.send(live, 'https://internal.example.test/hook', {}, '{}');
      expect(outcome).toMatchObject({ ok: false, error: `refused: ${hostRefused}; ${live.because}` });
      expect(await sender.send(live, 'https://127.0.0.1/hook', {}, '{}')).toMatchObject({ error: outcome.error });
    } finally {
      sender.close();
    }
  });

  it('a test environment accepts http, and local addresses where private targets are allowed; never other schemes', async () => {
    await expect(checkTarget('http://127.0.0.1:3000/hook', test)).resolves.toBe('http://127.0.0.1:3000/hook');
    await expect(checkTarget('http://localhost/hook', test)).resolves.toBe('http://localhost/hook');
    for (const url of ['file:///etc/passwd', 'gopher://127.0.0.1/', 'ftp://x/', 'javascript:alert(1)', '/relative'])
      await expect(checkTarget(url, test)).rejects.toMatchObject({ code: 'invalid_request' });
  });

  it('a test environment where private targets are denied takes http to public addresses only, by name or number', async () => {
    const loopbackDns: Resolver = async (host) => (host === 'internal.example.test' ? ['127.0.0.1'] : fakeDns(host));
    await expect(checkTarget('http://93.184.215.14/hook', testDenied, loopbackDns)).resolves.toBe(
      'http://93.184.215.14/hook',
    );
    await expect(checkTarget('http://hooks.example-public.test/', testDenied, loopbackDns)).resolves.toBe(
      'http://hooks.example-public.test/',
    );
    for (const url of [...refusedUrls.slice(1), 'http://internal.example.test/', 'http://mixed.example.test/']) {
      const err = await checkTarget(url, testDenied, loopbackDns).catch((e: unknown) => e);
      expect(err, url).toMatchObject({ code: 'invalid_request', details: { reason: 'url_not_allowed' } });
      expect((err as Error).message, url).toContain('CAIRN_PRIVATE_TARGETS=deny');
    }
  });
});

let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<Record<string, never>>;
let trap: Server;
let trapPort: number;
let connections = 0;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
  // The worker's DNS answers 127.0.0.1 for a name the creation check saw as public: a rebinding.
  worker = (await startWebhookWorker(h, {
    resolve: async (host) => (host === 'rebind.example.test' ? ['127.0.0.1'] : deadlineResolver(host)),
  })) as unknown as WorkerHandle<Record<string, never>>;
  // What the rebinding would reach: it must see no connection at all.
  trap = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  trapPort = (trap.address() as AddressInfo).port;
});

afterAll(async () => {
  await worker?.stop();
  await new Promise((resolve) => trap?.close(resolve));
});

describe('over HTTP', () => {
  it('a live environment refuses local targets at creation and at update, changing nothing', async () => {
    const env = await createTestEnv(h.db, undefined, 'live');
    const api = apiFor(web, env.secretKey, env.env.name);
    for (const url of refusedUrls) {
      const res = await api('POST', '/webhook_endpoints', { url, event_types: ['*'] });
      expect(res.status, url).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_request', details: { reason: 'url_not_allowed' } });
    }
    expect(await h.db('webhook_endpoints').where({ env_id: env.env.id })).toEqual([]);

    const ok = await api<{ id: string; url: string }>('POST', '/webhook_endpoints', {
      url: 'https://93.184.215.14/hook',
      event_types: ['*'],
    });
    expect(ok.status).toBe(201);
    const patched = await api('PATCH', `/webhook_endpoints/${ok.body.id}`, { url: 'https://169.254.169.254/' });
    expect(patched.status).toBe(400);
    expect((await api<{ url: string }>('GET', `/webhook_endpoints/${ok.body.id}`)).body.url).toBe(
      'https://93.184.215.14/hook',
    );
  });

  it('a test environment delivers to a local http receiver', async () => {
    const env = await createTestEnv(h.db);
    const api = apiFor(web, env.secretKey, env.env.name);
    const receiver = await startReceiver();
    try {
      expect((await api('POST', '/webhook_endpoints', { url: receiver.url, event_types: ['*'] })).status).toBe(201);
      expect((await api('POST', '/end_users', { email: 'dev@example.com' })).status).toBe(201);
      await receiver.waitFor(1);
    } finally {
      await receiver.close();
    }
  });

  it('a name that resolved public at creation and resolves to 127.0.0.1 at delivery reaches nothing', async () => {
    const env = await createTestEnv(h.db, undefined, 'live');
    const url = `https://rebind.example.test:${trapPort}/hook`;
    // At creation the name answered a public address (the DNS the web would have seen).
    const { row } = await createEndpoint(
      { config: h.config, db: h.db, resolve: async () => ['93.184.215.14'] },
      { id: env.env.id, mode: 'live' },
      { url, event_types: ['*'] },
    );
    const api = apiFor(web, env.secretKey, env.env.name);
    expect((await api('POST', '/end_users', { email: 'rebind@example.com' })).status).toBe(201);
    let attempts: { error?: string; status_code?: number }[] = [];
    await eventually(async () => {
      const res = await api<{ deliveries: { attempts: typeof attempts }[] }>(
        'GET',
        `/webhook_endpoints/${row.id}/deliveries`,
      );
      attempts = res.body.deliveries[0]?.attempts ?? [];
      return attempts.length > 0;
    });
    // Refused without naming the address it found: that would map internal names for the caller.
    expect(attempts[0]).toMatchObject({ error: `refused: ${hostRefused}; ${live.because}` });
    expect(attempts[0]!.error).not.toContain('127.0.0.1');
    expect(attempts[0]).not.toHaveProperty('status_code');
    expect(connections).toBe(0);
  });
});
