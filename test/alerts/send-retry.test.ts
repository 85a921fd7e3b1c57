// A failing Slack target is retried by pg-boss's backoff (shortened here to a second, as
// test/errors/ingest.test.ts shortens the ingest's) and each attempt is recorded: a 503 twice,
// then a 200, leaves the action `sent` after three attempts; one that keeps failing is `failed`
// after its last attempt, with the last error. A stored batch's firings share one job whatever
// their actions: a retry sends only the actions still pending (the mail that went out, another
// firing's message that went out, are not sent again), and a job queued for one firing or one
// action (as they were once) sends that one only.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WorkerHandle } from '../../src/worker.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { capture, readStored, sampleEvent } from '../errors/support.ts';
import { startReceiver, type Receiver } from '../webhooks/support.ts';
import { actionsOf, firingsOf, insertRule, startAlertWorker } from './support.ts';
import { createBoss } from '../../src/jobs/index.ts';
import { newId } from '../../src/ids.ts';
import { sqlNumber } from '../support/harness.ts';
import { recordOutcomes } from '../../src/domain/alerts/send/queries.ts';

let h: Harness;
let worker: WorkerHandle<Record<string, never>> | undefined;
const receivers: Receiver[] = [];

const stack = useWeb();
beforeAll(async () => {
  ({ h } = stack);
  const boss = createBoss(h.config, 'web');
  await boss.start();
  await boss.updateQueue('alerts.send', { retryLimit: 3, retryDelay: 1, retryBackoff: false });
  await boss.stop({ graceful: false, close: true });
  worker = (await startAlertWorker(h)) as unknown as WorkerHandle<Record<string, never>>;
});
afterAll(async () => {
  await worker?.stop();
  for (const r of receivers) await r.close();
});

async function fireOnce(reply: (n: number) => number, email?: string): Promise<{ firing: string; receiver: Receiver }> {
  const receiver = await startReceiver((_r, n) => reply(n));
  receivers.push(receiver);
  const env = await createTestEnv(h.db);
  const rule = await insertRule(h, env, {
    when: 'new_group',
    slack: receiver.url,
    ...(email ? { email: [email] } : {}),
  });
  const uid = await capture(stack.web, env, sampleEvent({ event_time: new Date().toISOString() }));
  await readStored(stack.web, env, uid);
  const [firing] = await firingsOf(h, rule);
  return { firing: firing!.id, receiver };
}

/**
 * Waits until the firing's actions are sent, sets them pending again, and queues `data` as a job
 * of the shape jobs once had (per firing, or per action).
 */
async function sendAgainAs(firing: string, data: { firing_id: string; action_index?: number }): Promise<void> {
  await eventually(async () => (await actionsOf(h, firing)).every((a) => a.state === 'sent') || undefined);
  await h.db('alert_firing_actions').where({ firing_id: firing }).update({ state: 'pending', attempt_count: 0 });
  const boss = createBoss(h.config, 'web');
  await boss.start();
  try {
    await boss.send('alerts.send', data);
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

it('retries a 503 and records each attempt until the receiver takes it', async () => {
  const { firing, receiver } = await fireOnce((n) => (n <= 2 ? 503 : 200));
  const [action] = await eventually(async () => {
    const rows = await actionsOf(h, firing);
    return rows[0]?.state === 'sent' ? rows : undefined;
  });
  expect(action).toMatchObject({ type: 'slack', state: 'sent', attempt_count: 3, error: null });
  expect(receiver.received).toHaveLength(3);
  // Every attempt carried the same message.
  expect(new Set(receiver.received.map((r) => r.body)).size).toBe(1);
  expect(receiver.delivered()).toHaveLength(1);
});

it('settles the action as failed, with the last error, after the last attempt', async () => {
  const { firing, receiver } = await fireOnce(() => 503);
  const [action] = await eventually(async () => {
    const rows = await actionsOf(h, firing);
    return rows[0]?.state === 'failed' ? rows : undefined;
  });
  expect(action).toMatchObject({ state: 'failed', attempt_count: 4, error: 'HTTP 503' });
  expect(receiver.received).toHaveLength(4);
});

/** A send job's condition: it carries this firing. */
const carries = `jsonb_exists(data->'firing_ids', ?)`;

const outboxTo = (to: string) => sqlNumber(h.db, `select count(*) from mail_outbox where "to" = ?`, [to]);

it("sends a firing's actions in one job, and a retry only the one still pending", async () => {
  const to = `both-${newId('x')}@example.com`;
  const { firing, receiver } = await fireOnce((n) => (n <= 2 ? 503 : 200), to);
  const actions = await eventually(async () => {
    const rows = await actionsOf(h, firing);
    return rows.every((a) => a.state === 'sent') ? rows : undefined;
  });
  // Email first (index 0), the Slack action second: the mail went out once, on the first attempt.
  expect(actions).toMatchObject([
    { type: 'email', state: 'sent', attempt_count: 1 },
    { type: 'slack', state: 'sent', attempt_count: 3 },
  ]);
  expect(await outboxTo(to)).toBe(1);
  expect(receiver.delivered()).toHaveLength(1);
  expect(
    await sqlNumber(h.db, `select count(*) from pgboss.job where name = 'alerts.send' and ${carries}`, [firing]),
  ).toBe(1);
});

it('sends only its own action for a job queued per action', async () => {
  const to = `one-${newId('x')}@example.com`;
  const { firing, receiver } = await fireOnce(() => 200, to);
  // The firing's actions pending again, and a job for the second one only, as jobs once were.
  await sendAgainAs(firing, { firing_id: firing, action_index: 1 });
  const actions = await eventually(async () => {
    const rows = await actionsOf(h, firing);
    return rows[1]?.state === 'sent' && rows[1].attempt_count === 1 ? rows : undefined;
  });
  expect(actions[0]).toMatchObject({ type: 'email', state: 'pending', attempt_count: 0 });
  expect(await outboxTo(to)).toBe(1);
  expect(receiver.received).toHaveLength(2);
});

it("retries a batch's firing that fails alone: the others of its job are sent once", async () => {
  const bad = await startReceiver(() => 503);
  const good = await startReceiver(() => 200);
  receivers.push(bad, good);
  const env = await createTestEnv(h.db);
  // Two rules fire for one new group, in one batch: their firings share a job.
  const failing = await insertRule(h, env, { when: 'new_group', slack: bad.url });
  const passing = await insertRule(h, env, { when: 'new_group', slack: good.url });
  const uid = await capture(stack.web, env, sampleEvent({ event_time: new Date().toISOString() }));
  await readStored(stack.web, env, uid);
  const [f1] = await firingsOf(h, failing);
  const [f2] = await firingsOf(h, passing);
  const jobOf = (firing: string) =>
    h
      .db('pgboss.job')
      .where({ name: 'alerts.send' })
      .whereRaw(carries, [firing])
      .select('id', 'state', 'retry_count') as Promise<{ id: string; state: string; retry_count: number }[]>;
  // The failing one's last attempt settles its action `failed` (and completes the job).
  const [job] = await eventually(async () => {
    const rows = await jobOf(f1!.id);
    return rows[0]?.state === 'completed' ? rows : undefined;
  });
  expect(job).toMatchObject({ state: 'completed', retry_count: 3 });
  expect(await jobOf(f2!.id)).toEqual([job]);
  expect(await actionsOf(h, f2!.id)).toMatchObject([{ state: 'sent', attempt_count: 1 }]);
  expect(await actionsOf(h, f1!.id)).toMatchObject([{ state: 'failed', attempt_count: 4, error: 'HTTP 503' }]);
  expect(good.received).toHaveLength(1);
  expect(bad.received).toHaveLength(4);
});

it('sends only its own firing for a job queued per firing', async () => {
  const to = `per-firing-${newId('x')}@example.com`;
  const { firing, receiver } = await fireOnce(() => 200, to);
  // The firing's actions pending again, and a job for it alone, as jobs once were.
  await sendAgainAs(firing, { firing_id: firing });
  const actions = await eventually(async () => {
    const rows = await actionsOf(h, firing);
    return rows.every((a) => a.state === 'sent' && a.attempt_count === 1) ? rows : undefined;
  });
  expect(actions).toHaveLength(2);
  expect(await outboxTo(to)).toBe(2);
  expect(receiver.received).toHaveLength(2);
});

it("records an error holding NUL or half a surrogate pair (a receiver's text cut mid-pair) without them", async () => {
  const { firing } = await fireOnce(() => 200);
  await eventually(async () => (await actionsOf(h, firing)).every((a) => a.state === 'sent') || undefined);
  await h.db('alert_firing_actions').where({ firing_id: firing }).update({ state: 'pending', attempt_count: 0 });
  await recordOutcomes(h.db, [
    { firing_id: firing, action_index: 0, state: 'pending', error: 'HTTP 500 b\u0000ad \ud83d' },
  ]);
  expect(await actionsOf(h, firing)).toMatchObject([
    { state: 'pending', attempt_count: 1, error: 'HTTP 500 bad \ufffd' },
  ]);
});
