// A failing Slack target is retried by pg-boss's backoff (shortened here to a second, as
// test/errors/ingest.test.ts shortens the ingest's) and each attempt is recorded: a 503 twice,
// then a 200, leaves the action `sent` after three attempts; one that keeps failing is `failed`
// after its last attempt, with the last error.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WorkerHandle } from '../../src/worker.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { capture, readStored, sampleEvent } from '../errors/support.ts';
import { startReceiver, type Receiver } from '../webhooks/support.ts';
import { actionsOf, firingsOf, insertRule, startAlertWorker } from './support.ts';
import { createBoss } from '../../src/jobs/index.ts';

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

async function fireOnce(reply: (n: number) => number): Promise<{ firing: string; receiver: Receiver }> {
  const receiver = await startReceiver((_r, n) => reply(n));
  receivers.push(receiver);
  const env = await createTestEnv(h.db);
  const rule = await insertRule(h, env, { when: 'new_group', slack: receiver.url });
  const uid = await capture(stack.web, env, sampleEvent({ event_time: new Date().toISOString() }));
  await readStored(stack.web, env, uid);
  const [firing] = await firingsOf(h, rule);
  return { firing: firing!.id, receiver };
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
