// Lanes under faults, from outside (the API, the real worker, real receivers on 127.0.0.1): an
// endpoint whose receiver went down and came back catches up on its backlog at the fast lane's
// rate, in order per resource, each message delivered once; an endpoint whose receiver hangs with
// a backlog queued in the fast lane takes it to the slow lane instead of holding fast-lane slots
// for every one of its timeouts.
import { describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createTestEnv } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { attemptJobId } from '../../src/domain/webhooks/outbox/emit.ts';
import { apiFor, useWebhookStack, type Api } from './support.ts';

const stack = useWebhookStack();
let users = 0;

interface Got {
  id: string;
  body: string;
  /** When it was answered 2xx; undefined while unanswered or answered otherwise. */
  at?: number;
}

/** A receiver on 127.0.0.1 that answers each request with `reply()`'s status, or holds it until `release`. */
async function startHoldingReceiver(reply: () => number | 'hold') {
  const received: Got[] = [];
  const held = new Map<ServerResponse, Got>();
  const answer = (res: ServerResponse, got: Got, status: number) => {
    if (status >= 200 && status < 300) got.at = Date.now();
    res.writeHead(status).end();
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const got: Got = { id: String(req.headers['webhook-id']), body: Buffer.concat(chunks).toString('utf8') };
      received.push(got);
      const status = reply();
      if (status === 'hold') held.set(res, got);
      else answer(res, got, status);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    held: () => held.size,
    delivered: () => received.filter((g) => g.at !== undefined).sort((a, b) => a.at! - b.at!),
    release(status: number) {
      for (const [res, got] of held) answer(res, got, status);
      held.clear();
    },
    async close() {
      for (const res of held.keys()) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function setUp(reply: () => number | 'hold') {
  const env: CreatedEnv = await createTestEnv(stack.h.db);
  const api: Api = apiFor(stack.web, env.secretKey, env.env.name);
  const receiver = await startHoldingReceiver(reply);
  const created = await api<{ id: string }>('POST', '/webhook_endpoints', { url: receiver.url, event_types: ['*'] });
  expect(created.status).toBe(201);
  const endpointId = created.body.id;
  const newUser = async () => {
    users += 1;
    const res = await api<{ id: string }>('POST', '/end_users', { email: `catchup${users}@example.com` });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const slow = async () =>
    ((await stack.h.db('webhook_endpoints').where({ id: endpointId }).first('slow')) as { slow: boolean }).slow;
  /** The endpoint's jobs per queue and state, e.g. `webhooks.deliver/created`. */
  const jobs = async () => {
    const { rows } = await stack.h.db.raw<{ rows: { k: string; n: number }[] }>(
      `select name || '/' || state as k, count(*)::int as n from pgboss.job
        where data->>'endpoint_id' = ? group by 1`,
      [endpointId],
    );
    return Object.fromEntries(rows.map((r) => [r.k, r.n])) as Record<string, number>;
  };
  return { ...receiver, api, endpointId, newUser, slow, jobs };
}

/** Runs `fn` over `items`, `width` at a time. */
async function inParallel<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

const dataId = (r: Got) => (JSON.parse(r.body) as { data: { id: string } }).data.id;

describe('catching up', () => {
  it("a recovered endpoint's backlog drains at the fast lane's rate, in order per resource, each message once", async () => {
    // The receiver fails (503), then stops answering (as one that is down does: the attempts wait
    // for their answer), then comes back: it answers the requests it held, late, and the next at once.
    let mode: 'ok' | 'fail' | 'hold' = 'ok';
    const s = await setUp(() => (mode === 'hold' ? 'hold' : mode === 'ok' ? 204 : 503));
    // Three quick successes in a row bring a new endpoint to the fast lane.
    for (let i = 0; i < 3; i++) await s.newUser();
    await eventually(() => s.delivered().length === 3);
    await eventually(async () => !(await s.slow()));

    // The receiver fails: the next message's attempt fails, and the endpoint moves to the slow lane.
    mode = 'fail';
    await s.newUser();
    await eventually(() => s.received.length === 4);
    await eventually(() => s.slow());
    // It stops answering; the failed message's retry (about 5 s later) waits for its answer.
    mode = 'hold';
    await eventually(() => s.held() === 1, { timeoutMs: 10_000 });

    // Meanwhile its backlog queues: 200 users created, and 100 of them deleted (a second message
    // about each, which must come after the first).
    const ids = await inParallel(
      Array.from({ length: 200 }, (_, i) => i),
      16,
      () => s.newUser(),
    );
    await inParallel(ids.slice(0, 100), 16, async (id) =>
      expect((await s.api('DELETE', `/end_users/${id}`)).status).toBe(200),
    );
    mode = 'ok';
    const recovered = Date.now();
    s.release(204);

    const total = 3 + 1 + 200 + 100;
    await eventually(() => s.delivered().length >= total, { timeoutMs: 240_000 });
    const delivered = s.delivered();
    const seconds = (delivered.at(-1)!.at! - recovered) / 1000;
    const backlog = total - 3;
    console.log(
      `catch-up: ${backlog} messages delivered in ${seconds.toFixed(2)} s after the receiver came back (${(backlog / seconds).toFixed(1)}/s)`,
    );
    // Left in the slow lane (one attempt per fetch, two per environment), this backlog took 26 s on
    // a quiet machine; the fast lane took 2.1 s there and 13.4 s beside two busy loops. 20 s tells
    // the lanes apart with room for a loaded machine.
    expect(seconds).toBeLessThan(20);

    // Each message once (by webhook-id), and per user its creation before its deletion.
    expect(delivered).toHaveLength(total);
    expect(new Set(delivered.map((r) => r.id)).size).toBe(total);
    const at = new Map(delivered.map((r, i) => [`${(JSON.parse(r.body) as { type: string }).type}/${dataId(r)}`, i]));
    for (const id of ids.slice(0, 100)) {
      expect(at.get(`end_user.created/${id}`)).toBeDefined();
      expect(at.get(`end_user.created/${id}`)!).toBeLessThan(at.get(`end_user.deleted/${id}`)!);
    }
    expect(await s.slow()).toBe(false);
    await s.close();
  }, 300_000);

  it('an endpoint whose receiver hangs with a backlog in the fast lane takes the backlog to the slow lane', async () => {
    let hanging = false;
    const s = await setUp(() => (hanging ? 'hold' : 204));
    try {
      for (let i = 0; i < 3; i++) await s.newUser();
      await eventually(() => s.delivered().length === 3);
      await eventually(async () => !(await s.slow()));

      // The receiver stops answering; 48 messages queue in the fast lane before the first
      // attempt's 15 s timeout says so.
      hanging = true;
      await inParallel(
        Array.from({ length: 48 }, (_, i) => i),
        8,
        () => s.newUser(),
      );
      await eventually(() => s.held() >= 4);
      await eventually(() => s.slow(), { timeoutMs: 30_000 });
      // Once the attempts fetched before the timeout (16 per fetch and per endpoint; pg-boss checks
      // the endpoint's 16 per fetch, so a second fetch may get in) have ended, nothing of this endpoint is left in the fast lane: the rest of its
      // backlog waits in the slow lane, where at most 2 of the environment's attempts run at once.
      await eventually(
        async () => {
          const jobs = await s.jobs();
          return !jobs['webhooks.deliver/created'] && !jobs['webhooks.deliver/active'];
        },
        { timeoutMs: 10_000 },
      );
      const ran = (await s.jobs())['webhooks.deliver/completed']!;
      expect(ran).toBeLessThanOrEqual(32);
      // Each message's first attempt was made in one lane. A fast-lane job fetched after the
      // move is not sent: deliver.ts queues it in the slow lane under an id made from its own, so
      // such a message has a job in each lane, and the slow one is that job's successor.
      const { rows } = await stack.h.db.raw<{ rows: { message_id: string; name: string; id: string }[] }>(
        `select data->>'message_id' as message_id, name, id from pgboss.job
          where data->>'endpoint_id' = ? and (data->>'attempt')::int = 1`,
        [s.endpointId],
      );
      // A slow-lane attempt that found its environment's 2 places taken was queued again under an
      // id made from its job's (`/wait/…`, batch.ts): each message's chain is told by its head.
      const waited = new Set(
        rows
          .filter((r) => r.name === 'webhooks.deliver-slow')
          .map((r) =>
            attemptJobId({ endpoint_id: s.endpointId, message_id: r.message_id, attempt: 1 }, `/wait/${r.id}`),
          ),
      );
      const heads = rows.filter((r) => !(r.name === 'webhooks.deliver-slow' && waited.has(r.id)));
      const lanes = new Map<string, { fast?: string; slow?: string }>();
      for (const r of heads) {
        const m = lanes.get(r.message_id) ?? {};
        m[r.name === 'webhooks.deliver' ? 'fast' : 'slow'] = r.id;
        lanes.set(r.message_id, m);
      }
      expect(lanes.size).toBe(3 + 48);
      let sentFast = 0;
      for (const [messageId, { fast, slow }] of lanes) {
        if (fast && slow)
          expect(slow).toBe(
            attemptJobId({ endpoint_id: s.endpointId, message_id: messageId, attempt: 1 }, `/lane/${fast}`),
          );
        else if (fast) sentFast++;
        else expect(slow).toBeDefined();
      }
      // The receiver held at least 4 of them; the 3 sent before the hang went in the slow lane,
      // where a new endpoint starts.
      expect(sentFast).toBeGreaterThanOrEqual(4);
      expect(sentFast).toBeLessThanOrEqual(ran);
      expect(heads.filter((r) => r.name === 'webhooks.deliver-slow')).toHaveLength(3 + 48 - sentFast);
    } finally {
      await s.close();
    }
  }, 120_000);
});
