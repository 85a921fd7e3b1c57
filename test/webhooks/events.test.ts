// Every event the API causes reaches a real HTTP receiver, signed so that the `standardwebhooks`
// package verifies it, with the resource as the API shows it; an action that rolls back sends
// nothing; messages about one resource arrive in the order the changes happened.
import { describe, expect, it } from 'vitest';
import { createTestEnv } from '../support/harness.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { capture, sampleEvent } from '../errors/support.ts';
import { strongPassword } from '../identity/support.ts';
import { apiFor, startReceiver, typeOf, useWebhookStack, verified, type Api, type Receiver } from './support.ts';
import { eventually } from '../support/probes.ts';

const stack = useWebhookStack();

interface Setup {
  env: CreatedEnv;
  api: Api;
  receiver: Receiver;
  endpoint: { id: string; secret: string };
}

async function setUp(eventTypes: string[] = ['*'], reply?: Parameters<typeof startReceiver>[0]): Promise<Setup> {
  const env = await createTestEnv(stack.h.db);
  const api = apiFor(stack.web, env.secretKey, env.env.name);
  const receiver = await startReceiver(reply);
  const res = await api<{ id: string; secret: string }>('POST', '/webhook_endpoints', {
    url: receiver.url,
    event_types: eventTypes,
    description: 'the test receiver',
  });
  expect(res.status).toBe(201);
  return { env, api, receiver, endpoint: res.body };
}

describe('end users', () => {
  it('end_user.created and end_user.deleted arrive signed, with the user as the API shows it', async () => {
    const s = await setUp();
    try {
      const created = await s.api<{ id: string }>('POST', '/end_users', {
        email: 'ada@example.com',
        password: strongPassword,
      });
      expect(created.status).toBe(201);
      const [message] = await s.receiver.waitFor(1, 'end_user.created');
      const body = verified(s.endpoint.secret, message!);
      expect(message!.id).toMatch(/^whmsg_[0-9a-z]{26}$/);
      expect(message!.headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(message!.timestamp) - Date.now() / 1000)).toBeLessThan(60);
      const shown = await s.api('GET', `/end_users/${created.body.id}`);
      expect(body).toMatchObject({ type: 'end_user.created', data: shown.body });
      expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
      // No password hash, no secret of any kind: the resource only.
      expect(message!.body).not.toMatch(/argon2|password_hash|cairn_sk_/);

      expect((await s.api('DELETE', `/end_users/${created.body.id}`)).status).toBe(200);
      const [deleted] = await s.receiver.waitFor(1, 'end_user.deleted');
      expect(verified(s.endpoint.secret, deleted!).data).toEqual({
        id: created.body.id,
        name: `${s.env.env.name}/end_users/${created.body.id}`,
        deleted: true,
      });
      // One message id per event, not per endpoint attempt.
      expect(deleted!.id).not.toBe(message!.id);

      const list = await s.api<{ deliveries: { id: string; state: string; attempts: { status_code: number }[] }[] }>(
        'GET',
        `/webhook_endpoints/${s.endpoint.id}/deliveries`,
      );
      expect(list.status).toBe(200);
      await eventually(async () => {
        const l = await s.api<{ deliveries: { state: string }[] }>(
          'GET',
          `/webhook_endpoints/${s.endpoint.id}/deliveries`,
        );
        return l.body.deliveries.length === 2 && l.body.deliveries.every((d) => d.state === 'succeeded');
      });
      const settled = await s.api<{ deliveries: { id: string; event_type: string; attempts: unknown[] }[] }>(
        'GET',
        `/webhook_endpoints/${s.endpoint.id}/deliveries`,
      );
      // Newest first.
      expect(settled.body.deliveries.map((d) => [d.id, d.event_type])).toEqual([
        [deleted!.id, 'end_user.deleted'],
        [message!.id, 'end_user.created'],
      ]);
      expect(settled.body.deliveries[0]!.attempts).toEqual([
        { time: expect.any(String), status_code: 204, duration_ms: expect.any(Number) },
      ]);
    } finally {
      await s.receiver.close();
    }
  });

  it('an action that fails sends nothing: a second user with a taken email', async () => {
    const s = await setUp(['end_user.created']);
    try {
      expect((await s.api('POST', '/end_users', { email: 'bo@example.com' })).status).toBe(201);
      expect((await s.api('POST', '/end_users', { email: 'bo@example.com' })).status).toBe(409);
      await s.receiver.waitFor(1);
      const messages = await stack.h.db('webhook_messages').where({ env_id: s.env.env.id });
      expect(messages).toHaveLength(1);
    } finally {
      await s.receiver.close();
    }
  });

  it('an endpoint gets only the types it subscribed to', async () => {
    const s = await setUp(['end_user.deleted']);
    try {
      const created = await s.api<{ id: string }>('POST', '/end_users', { email: 'cy@example.com' });
      await s.api('DELETE', `/end_users/${created.body.id}`);
      const [only] = await s.receiver.waitFor(1);
      expect(typeOf(only!)).toBe('end_user.deleted');
      expect(
        await stack.h.db('webhook_messages').where({ env_id: s.env.env.id, event_type: 'end_user.created' }),
      ).toEqual([]);
    } finally {
      await s.receiver.close();
    }
  });
});

describe('error groups', () => {
  it('created by the ingest, resolved and reopened by triage, reopened by a new occurrence: in order', async () => {
    const s = await setUp(['error_group.created', 'error_group.resolved', 'error_group.reopened']);
    try {
      await capture(stack.web, s.env, sampleEvent({ event_time: new Date(Date.now() - 60_000).toISOString() }));
      const [created] = await s.receiver.waitFor(1, 'error_group.created');
      const group = verified(s.endpoint.secret, created!).data as { uid: string; etag: string; state: string };
      expect(group.state).toBe('unresolved');
      const shown = await s.api<{ etag: string }>('GET', `/error_groups/${group.uid}`);
      expect(verified(s.endpoint.secret, created!).data).toMatchObject({ uid: group.uid, name: expect.any(String) });

      const resolved = await s.api<{ etag: string }>('POST', `/error_groups/${group.uid}:resolve`, {
        etag: shown.body.etag,
      });
      expect(resolved.status).toBe(200);
      const reopened = await s.api<{ etag: string }>('POST', `/error_groups/${group.uid}:reopen`, {
        etag: resolved.body.etag,
      });
      expect(reopened.status).toBe(200);
      const again = await s.api<{ etag: string }>('POST', `/error_groups/${group.uid}:resolve`, {
        etag: reopened.body.etag,
      });
      expect(again.status).toBe(200);
      // A new occurrence after the resolve reopens it (and is an event of its own).
      await capture(stack.web, s.env, sampleEvent({ event_time: new Date(Date.now() + 1000).toISOString() }));
      await s.receiver.waitFor(5);
      expect(s.receiver.received.map(typeOf)).toEqual([
        'error_group.created',
        'error_group.resolved',
        'error_group.reopened',
        'error_group.resolved',
        'error_group.reopened',
      ]);
      const last = verified(s.endpoint.secret, s.receiver.received[4]!).data;
      expect(last).toMatchObject({ uid: group.uid, state: 'unresolved', occurrence_count: 2 });
      // Acknowledging is not an event.
      const now = await s.api<{ etag: string }>('GET', `/error_groups/${group.uid}`);
      expect((await s.api('POST', `/error_groups/${group.uid}:acknowledge`, { etag: now.body.etag })).status).toBe(200);
      expect(await stack.h.db('webhook_messages').where({ env_id: s.env.env.id })).toHaveLength(5);
    } finally {
      await s.receiver.close();
    }
  });

  it('a later message about a group waits until the earlier one is delivered, though its receiver failed it first', async () => {
    // The resolve's message fails its first attempt (retried ~5 s later); the reopen's must not pass it.
    let failedOnce = false;
    const s = await setUp(['error_group.resolved', 'error_group.reopened'], (r) => {
      if (typeOf(r) === 'error_group.resolved' && !failedOnce) {
        failedOnce = true;
        return 503;
      }
      return 200;
    });
    try {
      await capture(stack.web, s.env, sampleEvent({ event_time: new Date(Date.now() - 60_000).toISOString() }));
      const group = await eventually(
        async () =>
          (await stack.h.db('error_groups').where({ env_id: s.env.env.id }).first()) as
            { id: string; etag: string } | undefined,
      );
      const resolved = await s.api<{ etag: string }>('POST', `/error_groups/${group.id}:resolve`, { etag: group.etag });
      await s.api('POST', `/error_groups/${group.id}:reopen`, { etag: resolved.body.etag });
      await s.receiver.waitFor(3, undefined, 30_000);
      expect(s.receiver.received.map(typeOf)).toEqual([
        'error_group.resolved',
        'error_group.resolved',
        'error_group.reopened',
      ]);
      const [first, retry] = s.receiver.received;
      // The retry is the same message: same id, same bytes; it waited about 5 s.
      expect(retry!.id).toBe(first!.id);
      expect(retry!.body).toBe(first!.body);
      expect(retry!.at - first!.at).toBeGreaterThanOrEqual(4500);
      verified(s.endpoint.secret, first!);
      verified(s.endpoint.secret, retry!);
    } finally {
      await s.receiver.close();
    }
  });
});
