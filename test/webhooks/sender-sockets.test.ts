// The webhook sender's kept-alive sockets (deliveries/send.ts): a fetch's burst of requests to one
// receiver opens its connections once, and the next burst reuses them all. Before, only 8 idle
// sockets were kept: every burst of 32 opened 24 new connections (each a connect, and for https a
// handshake), a third of a delivery's worker CPU in bench/webhooks.ts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSender } from '../../src/domain/webhooks/deliveries/send.ts';

const rule = { httpsOnly: false, publicOnly: false, because: '' };
let server: Server;
let url = '';
let connections = 0;

beforeAll(async () => {
  server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    req.resume();
    req.on('end', () => setTimeout(() => res.end('ok'), 20));
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('the webhook sender', () => {
  it('keeps a burst’s connections open for the next burst to the same receiver', async () => {
    const sender = createSender();
    try {
      const burst = () => Promise.all(Array.from({ length: 32 }, () => sender.send(rule, url, {}, '{}')));
      const first = await burst();
      expect(first.every((o) => o.ok)).toBe(true);
      expect(connections).toBe(32);
      const second = await burst();
      expect(second.every((o) => o.ok)).toBe(true);
      expect(connections).toBe(32);
    } finally {
      sender.close();
    }
  });
});
