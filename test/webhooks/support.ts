// What the webhook tests share: a real HTTP receiver that records every request and answers as the
// test says, the service's web and a worker for the queues that make and deliver events, and
// verification with the `standardwebhooks` package, as a receiver would do it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { queues, type AppRegistry } from '../../src/queues.ts';
import type { WebHandle } from '../../src/server.ts';
import { startWorker, type Handlers, type WorkerHandle } from '../../src/worker.ts';
import type { SendOptions } from '../../src/domain/webhooks/deliveries/send.ts';
import { handlers } from '../../workers/handlers.ts';
import { webhooksDeliver } from '../../workers/webhooks-deliver.ts';
import { call, createHarness, startTestWeb, type Answer, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/** What the receiver does with a request: a status, or `hang` (never answer, as a dead receiver). */
export type Reply = number | 'hang' | { status: number; location: string };

export interface Receiver {
  url: string;
  received: Received[];
  /** Requests whose answer was a 2xx. */
  delivered(): Received[];
  /** Waits until `n` requests (of `type` when given) came, or fails at the deadline. */
  waitFor(n: number, type?: string, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(reply: (r: Received, n: number) => Reply = () => 204): Promise<Receiver> {
  const received: Received[] = [];
  const ok = new Set<Received>();
  const hanging = new Set<ServerResponse>();
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const r: Received = {
        id: headers['webhook-id'] ?? '',
        timestamp: headers['webhook-timestamp'] ?? '',
        signature: headers['webhook-signature'] ?? '',
        headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(r);
      const answer = reply(r, received.length);
      if (answer === 'hang') {
        hanging.add(res);
        return;
      }
      if (typeof answer === 'number') {
        if (answer >= 200 && answer < 300) ok.add(r);
        res.writeHead(answer).end();
      } else res.writeHead(answer.status, { location: answer.location }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const of = (type?: string) => received.filter((r) => !type || typeOf(r) === type);
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    delivered: () => received.filter((r) => ok.has(r)),
    async waitFor(n, type, timeoutMs = 20_000) {
      await eventually(() => of(type).length >= n, { timeoutMs });
      return of(type);
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const typeOf = (r: Received): string => (JSON.parse(r.body) as { type: string }).type;

/** The message as a receiver sees it after `standardwebhooks` verified it with `secret` (throws when it does not verify). */
export function verified(
  secret: string,
  r: Received,
): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': r.id,
    'webhook-timestamp': r.timestamp,
    'webhook-signature': r.signature,
  }) as { type: string; timestamp: string; data: Record<string, unknown> };
}

const names = [
  'webhooks.deliver',
  'webhooks.deliver-slow',
  'webhooks.prune',
  'errors.ingest',
  'identity.sign-up',
] as const;
type Mine = Pick<AppRegistry, (typeof names)[number]>;

/** A worker for the queues these tests use; `send` gives the delivery its own DNS (a rebinding test). */
export async function startWebhookWorker(h: Harness, send: SendOptions = {}): Promise<WorkerHandle<Mine>> {
  const registry = Object.fromEntries(names.map((n) => [n, queues[n]])) as Mine;
  const deliver = webhooksDeliver(send);
  const mine = {
    ...Object.fromEntries(names.map((n) => [n, handlers[n]])),
    'webhooks.deliver': deliver('webhooks.deliver'),
    'webhooks.deliver-slow': deliver('webhooks.deliver-slow'),
  } as unknown as Handlers<Mine>;
  return startWorker(h.config, registry, mine, { pollingIntervalSeconds: 0.5 });
}

/** The /v1 path of an environment's collection. */
export const envPath = (envName: string): string => `/v1/${envName}`;

export interface Api {
  <T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<Answer<T>>;
}

export function apiFor(web: WebHandle, key: string, envName: string): Api {
  return (method, path, body) =>
    call(web.url, method, path.startsWith('/v1') ? path : `${envPath(envName)}${path}`, {
      key,
      ...(body === undefined ? {} : { body }),
    });
}

export interface WebhookStack {
  h: Harness;
  web: WebHandle;
}

/** A test file's database, web and webhook worker, made before its tests and stopped after them. */
export function useWebhookStack(send: SendOptions = {}): WebhookStack {
  const stack = {} as WebhookStack & { worker?: WorkerHandle<Mine> };
  beforeAll(async () => {
    stack.h = await createHarness();
    stack.web = await startTestWeb(stack.h);
    stack.worker = await startWebhookWorker(stack.h, send);
  });
  afterAll(async () => {
    await stack.worker?.stop();
    await stack.web?.stop();
    await stack.h?.close();
  });
  return stack;
}
