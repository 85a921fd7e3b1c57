// How messages are delivered: retries keep the id and the bytes, redelivery is one more attempt,
// a rotation signs with both secrets for 24 hours, an endpoint failing for 5 days is disabled with
// a reason, a slow endpoint holds back only itself, and secrets never reach a table in plaintext.
import { describe, expect, it } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { createTestEnv } from '../support/harness.ts';
import {
  apiFor,
  startReceiver,
  useWebhookStack,
  verified,
  type Api,
  type Receiver,
  type Reply,
  type Received,
} from './support.ts';
import { eventually } from '../support/probes.ts';

const stack = useWebhookStack();

interface Endpoint {
  id: string;
  secret: string;
  state: string;
  disabled_reason?: string;
}

interface Delivery {
  id: string;
  state: string;
  attempts: { status_code?: number; error?: string; duration_ms: number }[];
  next_attempt_time?: string;
}

let users = 0;

async function setUp(reply: (r: Received, n: number) => Reply = () => 200) {
  const env: CreatedEnv = await createTestEnv(stack.h.db);
  const api: Api = apiFor(stack.web, env.secretKey, env.env.name);
  const receiver: Receiver = await startReceiver(reply);
  const created = await api<Endpoint>('POST', '/webhook_endpoints', { url: receiver.url, event_types: ['*'] });
  expect(created.status).toBe(201);
  const endpoint = created.body;
  const newUser = async () => {
    users += 1;
    const res = await api<{ id: string }>('POST', '/end_users', { email: `u${users}@example.com` });
    expect(res.status).toBe(201);
    return res.body.id;
  };
  const deliveries = async () =>
    (await api<{ deliveries: Delivery[] }>('GET', `/webhook_endpoints/${endpoint.id}/deliveries`)).body.deliveries;
  return { env, api, receiver, endpoint, newUser, deliveries };
}

describe('retries and redelivery', () => {
  it('a failed attempt is retried about 5 s later with the same id and body; the next is due in about 5 minutes', async () => {
    const s = await setUp(() => 500);
    try {
      await s.newUser();
      const [first, second] = await s.receiver.waitFor(2, undefined, 30_000);
      expect(second!.id).toBe(first!.id);
      expect(second!.body).toBe(first!.body);
      expect(second!.at - first!.at).toBeGreaterThanOrEqual(4500);
      verified(s.endpoint.secret, second!);
      let pending: Delivery | undefined;
      await eventually(async () => {
        pending = (await s.deliveries())[0];
        return pending?.attempts.length === 2;
      });
      expect(pending).toMatchObject({ state: 'pending', attempts: [{ status_code: 500 }, { status_code: 500 }] });
      const due = new Date(pending!.next_attempt_time!).getTime() - Date.now();
      expect(due).toBeGreaterThan(4 * 60_000);
      expect(due).toBeLessThan(6 * 60_000);
      // Still pending: a redelivery now would race the coming attempt.
      const early = await s.api('POST', `/webhook_endpoints/${s.endpoint.id}/deliveries/${first!.id}:redeliver`);
      expect(early.status).toBe(409);
      expect(early.body).toMatchObject({ code: 'INVALID_STATE' });
    } finally {
      await s.receiver.close();
    }
  });

  it('redelivery is one more attempt of a settled delivery, same id and body, signed anew', async () => {
    const s = await setUp();
    try {
      await s.newUser();
      const [first] = await s.receiver.waitFor(1);
      await eventually(async () => (await s.deliveries())[0]?.state === 'succeeded');
      const res = await s.api<Delivery>(
        'POST',
        `/webhook_endpoints/${s.endpoint.id}/deliveries/${first!.id}:redeliver`,
      );
      expect(res.status).toBe(202);
      expect(res.body).toMatchObject({ id: first!.id, state: 'pending' });
      const [, again] = await s.receiver.waitFor(2);
      expect(again!.id).toBe(first!.id);
      expect(again!.body).toBe(first!.body);
      verified(s.endpoint.secret, again!);
      await eventually(async () => (await s.deliveries())[0]?.attempts.length === 2);
      expect((await s.deliveries())[0]).toMatchObject({ state: 'succeeded' });
      const unknown = await s.api(
        'POST',
        `/webhook_endpoints/${s.endpoint.id}/deliveries/whmsg_01jdx3k6r9m2w8q4t7v5b1c0yz:redeliver`,
      );
      expect(unknown.status).toBe(404);
    } finally {
      await s.receiver.close();
    }
  });

  it('a redirect is a failed attempt and is not followed', async () => {
    const target = await startReceiver();
    const s = await setUp(() => ({ status: 302, location: target.url }));
    try {
      await s.newUser();
      await eventually(async () => (await s.deliveries())[0]?.attempts.length === 1);
      expect((await s.deliveries())[0]!.attempts[0]).toMatchObject({
        status_code: 302,
        error: expect.stringContaining('redirect'),
      });
      expect(target.received).toEqual([]);
    } finally {
      await s.receiver.close();
      await target.close();
    }
  });
});

describe('secrets', () => {
  it('after a rotation every message carries both signatures, each verifying with its own secret', async () => {
    const s = await setUp();
    try {
      const rotated = await s.api<Endpoint>('POST', `/webhook_endpoints/${s.endpoint.id}:rotateSecret`);
      expect(rotated.status).toBe(200);
      expect(rotated.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(rotated.body.secret).not.toBe(s.endpoint.secret);
      await s.newUser();
      const [message] = await s.receiver.waitFor(1);
      expect(message!.signature.split(' ')).toHaveLength(2);
      expect(verified(rotated.body.secret!, message!).type).toBe('end_user.created');
      expect(verified(s.endpoint.secret, message!).type).toBe('end_user.created');
      // A secret that is neither does not verify.
      expect(() => verified('whsec_' + Buffer.alloc(32, 7).toString('base64'), message!)).toThrow();
      // After the 24 hours, only the new one signs.
      await stack.h
        .db('webhook_endpoints')
        .where({ id: s.endpoint.id })
        .update({ previous_secret_expire_time: new Date() });
      await s.newUser();
      const [, later] = await s.receiver.waitFor(2);
      expect(later!.signature.split(' ')).toHaveLength(1);
      expect(() => verified(s.endpoint.secret, later!)).toThrow();
      verified(rotated.body.secret!, later!);
    } finally {
      await s.receiver.close();
    }
  });

  it('the secret appears only in the answers of create and rotate, and is stored sealed', async () => {
    const s = await setUp();
    try {
      const got = await s.api<Endpoint>('GET', `/webhook_endpoints/${s.endpoint.id}`);
      expect(got.body).not.toHaveProperty('secret');
      const list = await s.api<{ webhook_endpoints: Endpoint[] }>('GET', '/webhook_endpoints');
      expect(list.body.webhook_endpoints[0]).not.toHaveProperty('secret');
      const patched = await s.api<Endpoint>('PATCH', `/webhook_endpoints/${s.endpoint.id}`, { description: 'x' });
      expect(patched.body).not.toHaveProperty('secret');
      const raw = s.endpoint.secret.slice('whsec_'.length);
      const rows = await stack.h.db.raw<{ rows: unknown[] }>('select * from webhook_endpoints where id = ?', [
        s.endpoint.id,
      ]);
      const dump = JSON.stringify(rows.rows);
      expect(dump).not.toContain(raw);
      expect(dump).not.toContain(Buffer.from(raw, 'base64').toString('hex'));
    } finally {
      await s.receiver.close();
    }
  });
});

describe('failing endpoints', () => {
  it('an endpoint whose attempts failed for 5 days is disabled with a reason; enabling it clears the reason', async () => {
    const s = await setUp(() => 500);
    try {
      // Five days of failures, as the endpoint's record would show them.
      await stack.h
        .db('webhook_endpoints')
        .where({ id: s.endpoint.id })
        .update({ failing_since: new Date(Date.now() - 5 * 24 * 3600_000 - 60_000), last_failure_time: new Date() });
      await s.newUser();
      await eventually(async () => {
        const e = await s.api<Endpoint>('GET', `/webhook_endpoints/${s.endpoint.id}`);
        return e.body.state === 'disabled';
      });
      const disabled = await s.api<Endpoint>('GET', `/webhook_endpoints/${s.endpoint.id}`);
      expect(disabled.body.disabled_reason).toMatch(/failed.*HTTP 500/);
      // A disabled endpoint is sent nothing: the pending retry fails without a request, and a new
      // event makes no delivery for it.
      const before = s.receiver.received.length;
      await eventually(async () => (await s.deliveries())[0]?.state === 'failed', { timeoutMs: 30_000 });
      expect((await s.deliveries())[0]!.attempts).toEqual([
        expect.objectContaining({ status_code: 500 }),
        expect.objectContaining({ error: expect.stringMatching(/disabled/) }),
      ]);
      await s.newUser();
      expect(await s.deliveries()).toHaveLength(1);
      expect(s.receiver.received.length).toBe(before);
      const redeliver = await s.api(
        'POST',
        `/webhook_endpoints/${s.endpoint.id}/deliveries/${(await s.deliveries())[0]!.id}:redeliver`,
      );
      expect(redeliver.status).toBe(409);
      // Five days of failures that stopped a day ago are not five days of failing: one more
      // failure starts the count again.
      const quiet = await setUp(() => 500);
      try {
        await stack.h
          .db('webhook_endpoints')
          .where({ id: quiet.endpoint.id })
          .update({
            failing_since: new Date(Date.now() - 6 * 24 * 3600_000),
            last_failure_time: new Date(Date.now() - 24 * 3600_000),
          });
        await quiet.newUser();
        await eventually(async () => (await quiet.deliveries())[0]?.attempts.length === 1);
        expect((await quiet.api<Endpoint>('GET', `/webhook_endpoints/${quiet.endpoint.id}`)).body.state).toBe(
          'enabled',
        );
        const restarted = await stack.h.db('webhook_endpoints').where({ id: quiet.endpoint.id }).first('failing_since');
        expect(Date.now() - (restarted as { failing_since: Date }).failing_since.getTime()).toBeLessThan(60_000);
      } finally {
        await quiet.receiver.close();
      }
      const enabled = await s.api<Endpoint>('PATCH', `/webhook_endpoints/${s.endpoint.id}`, { state: 'enabled' });
      expect(enabled.body).toMatchObject({ state: 'enabled' });
      expect(enabled.body).not.toHaveProperty('disabled_reason');
      expect(await stack.h.db('webhook_endpoints').where({ id: s.endpoint.id }).first('failing_since')).toMatchObject({
        failing_since: null,
      });
    } finally {
      await s.receiver.close();
    }
  });

  it('a slow endpoint holds back only its own messages', async () => {
    const slow = await setUp(() => 'hang');
    const fast = await setUp();
    try {
      // Ten users in each environment: the slow receiver holds its attempts for up to 15 s each.
      for (let i = 0; i < 10; i++) await slow.newUser();
      await slow.receiver.waitFor(2);
      const started = Date.now();
      for (let i = 0; i < 10; i++) await fast.newUser();
      await fast.receiver.waitFor(10, undefined, 10_000);
      expect(Date.now() - started).toBeLessThan(10_000);
      // A new endpoint waits in the slow lane, at most 2 attempts of its environment at once (the
      // job's group): the rest wait their turn.
      expect(slow.receiver.received.length).toBe(2);
    } finally {
      await slow.receiver.close();
      await fast.receiver.close();
    }
  });

  it("one tenant's many dead receivers hold 2 attempts at once, and another tenant's messages go through meanwhile", async () => {
    const dead = await setUp(() => 'hang');
    const healthy = await setUp();
    try {
      // Five more endpoints of the same environment, on receivers that never answer.
      for (let i = 0; i < 5; i++) {
        const more = await dead.api('POST', '/webhook_endpoints', {
          url: `${dead.receiver.url}?endpoint=${i}`,
          event_types: ['*'],
        });
        expect(more.status).toBe(201);
      }
      for (let i = 0; i < 4; i++) await dead.newUser();
      await dead.receiver.waitFor(2);
      for (let i = 0; i < 10; i++) await healthy.newUser();
      // Within 14 s: the dead receivers' attempts end at their 15 s timeout and are retried about
      // 5 s later, so until then their receiver has seen exactly its first 2 whatever the load.
      await healthy.receiver.waitFor(10, undefined, 14_000);
      // 24 attempts are due to the dead receivers, and none of them has ended (each waits for its
      // 15 s timeout): the healthy environment's 10 went through beside their 2.
      expect(dead.receiver.received.length).toBe(2);
      const queued = await stack.h.db.raw<{ rows: { name: string; n: number }[] }>(
        `select name, count(*)::int as n from pgboss.job
          where data->>'endpoint_id' in (select id from webhook_endpoints where env_id = ?)
            and state <> 'completed' group by name`,
        [dead.env.env.id],
      );
      expect(queued.rows).toEqual([{ name: 'webhooks.deliver-slow', n: 24 }]);
    } finally {
      await dead.receiver.close();
      await healthy.receiver.close();
    }
  });

  it('an endpoint starts in the slow lane, moves to the fast one after three quick successes in a row, and back after a failure', async () => {
    let status = 200;
    const s = await setUp(() => status);
    const laneOf = async (messageId: string, attempt = 1) => {
      const row = await stack.h
        .db('pgboss.job')
        .whereRaw("data->>'message_id' = ? and (data->>'attempt')::int = ?", [messageId, attempt])
        .first('name');
      return (row as { name: string } | undefined)?.name;
    };
    const slowFlag = async () =>
      ((await stack.h.db('webhook_endpoints').where({ id: s.endpoint.id }).first('slow')) as { slow: boolean }).slow;
    try {
      expect(await slowFlag()).toBe(true);
      for (let i = 1; i <= 2; i++) {
        await s.newUser();
        const got = (await s.receiver.waitFor(i))[i - 1]!;
        expect(await laneOf(got.id)).toBe('webhooks.deliver-slow');
        await eventually(async () => (await s.deliveries()).every((d) => d.state === 'succeeded'));
        expect(await slowFlag()).toBe(true);
      }
      await s.newUser();
      const [, , third] = await s.receiver.waitFor(3);
      expect(await laneOf(third!.id)).toBe('webhooks.deliver-slow');
      await eventually(async () => (await slowFlag()) === false);

      await s.newUser();
      const fourth = (await s.receiver.waitFor(4))[3]!;
      expect(await laneOf(fourth.id)).toBe('webhooks.deliver');

      status = 500;
      await s.newUser();
      const fifth = (await s.receiver.waitFor(5))[4]!;
      expect(await laneOf(fifth.id)).toBe('webhooks.deliver');
      // Its retry (about 5 s later) waits in the slow lane, and so does everything after it.
      expect(await eventually(() => laneOf(fifth.id, 2))).toBe('webhooks.deliver-slow');
      expect(await slowFlag()).toBe(true);
    } finally {
      await s.receiver.close();
    }
  });
});

describe('the endpoint resource', () => {
  it('lists, gets, updates and deletes; a deleted endpoint is sent nothing more', async () => {
    const s = await setUp();
    try {
      const list = await s.api<{ webhook_endpoints: Endpoint[] }>('GET', '/webhook_endpoints');
      expect(list.body.webhook_endpoints.map((e) => e.id)).toEqual([s.endpoint.id]);
      const patched = await s.api<Endpoint & { event_types: string[]; description: string }>(
        'PATCH',
        `/webhook_endpoints/${s.endpoint.id}`,
        { event_types: ['end_user.deleted', 'end_user.deleted'], description: 'only deletions' },
      );
      expect(patched.status).toBe(200);
      expect(patched.body).toMatchObject({ event_types: ['end_user.deleted'], description: 'only deletions' });
      for (const bad of [
        { event_types: [] },
        { event_types: ['*', 'end_user.created'] },
        { event_types: ['user.signed_up'] },
        { description: 'x'.repeat(1001) },
        { url: 'ftp://example.com/x' },
        { url: 'not a url' },
        { state: 'paused' },
        { secret: 'whsec_mine' },
      ]) {
        const res = await s.api('PATCH', `/webhook_endpoints/${s.endpoint.id}`, bad);
        expect(res.status, JSON.stringify(bad)).toBe(400);
        expect(res.body).toMatchObject({ code: 'invalid_request' });
      }
      expect((await s.api('DELETE', `/webhook_endpoints/${s.endpoint.id}`)).status).toBe(204);
      expect((await s.api('GET', `/webhook_endpoints/${s.endpoint.id}`)).status).toBe(404);
      expect((await s.api('DELETE', `/webhook_endpoints/${s.endpoint.id}`)).status).toBe(404);
      await s.newUser();
      expect(await stack.h.db('webhook_messages').where({ env_id: s.env.env.id })).toEqual([]);
    } finally {
      await s.receiver.close();
    }
  });

  it('an endpoint deleted while its messages are being written and delivered answers 204, and nothing fails', async () => {
    // Half the receiver's answers fail, so attempts also change the endpoint's failure record.
    const s = await setUp((_r, n) => (n % 2 ? 500 : 200));
    try {
      const writes = Promise.all(Array.from({ length: 20 }, () => s.newUser()));
      await s.receiver.waitFor(3);
      const deleted = await s.api('DELETE', `/webhook_endpoints/${s.endpoint.id}`);
      expect(deleted.status).toBe(204);
      await writes;
      expect(await stack.h.db('webhook_deliveries').where({ endpoint_id: s.endpoint.id })).toEqual([]);
      expect(await stack.h.db('webhook_attempts').where({ endpoint_id: s.endpoint.id })).toEqual([]);
    } finally {
      await s.receiver.close();
    }
  });

  it("another environment's key cannot see or change an endpoint", async () => {
    const s = await setUp();
    const other = await createTestEnv(stack.h.db);
    try {
      const theirs = apiFor(stack.web, other.secretKey, other.env.name);
      expect((await theirs('GET', `/webhook_endpoints/${s.endpoint.id}`)).status).toBe(404);
      expect((await theirs('DELETE', `/webhook_endpoints/${s.endpoint.id}`)).status).toBe(404);
      expect((await theirs('POST', `/webhook_endpoints/${s.endpoint.id}:rotateSecret`)).status).toBe(404);
      expect((await theirs('GET', `/webhook_endpoints/${s.endpoint.id}/deliveries`)).status).toBe(404);
      // Their key on this environment's path is refused outright.
      const cross = apiFor(stack.web, other.secretKey, s.env.env.name);
      expect((await cross('GET', '/webhook_endpoints')).status).toBe(403);
    } finally {
      await s.receiver.close();
    }
  });
});
