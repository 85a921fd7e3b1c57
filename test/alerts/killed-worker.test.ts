// A worker killed mid-send loses nothing and records nothing twice: the real worker (a child
// process) stores the event, fires the rule and starts the Slack POST; it is SIGKILLed while the
// receiver holds that request open. Another worker sends the same message again (at least once),
// and the firing stays recorded once, its action `sent` after one recorded attempt.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WebHandle } from '../../src/server.ts';
import type { WorkerHandle } from '../../src/worker.ts';
import { testEncryptionKey } from '../support/config.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { capture, sampleEvent } from '../errors/support.ts';
import { startReceiver } from '../webhooks/support.ts';
import { actionsOf, firingsOf, insertRule, startAlertWorker } from './support.ts';

let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<Record<string, never>> | undefined;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
});
afterAll(async () => {
  await worker?.stop();
});

it('sends again after its worker was killed mid-send, and records the firing once', async () => {
  const env = await createTestEnv(h.db);
  // The first request is held open (the worker is killed while it waits); later ones succeed.
  const receiver = await startReceiver((_r, n) => (n === 1 ? 'hang' : 200));
  const rule = await insertRule(h, env, { when: 'new_group', slack: receiver.url });
  const child = spawn(process.execPath, ['workers/main.ts'], {
    env: { ...process.env, DATABASE_URL: h.database.url, CAIRN_ENCRYPTION_KEY: testEncryptionKey, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = once(child, 'exit');
  try {
    await capture(web, env, sampleEvent({ event_time: new Date().toISOString() }));
    const [held] = await receiver.waitFor(1, undefined, 60_000);
    child.kill('SIGKILL');
    await exited;
    const [firing, ...more] = await firingsOf(h, rule);
    expect(more).toEqual([]);
    // Nothing was recorded of the send: it never finished.
    expect(await actionsOf(h, firing!.id)).toMatchObject([{ state: 'pending', attempt_count: 0 }]);

    worker = (await startAlertWorker(h)) as unknown as WorkerHandle<Record<string, never>>;
    const [, again] = await receiver.waitFor(2, undefined, 90_000);
    expect(again!.body).toBe(held!.body);
    const [action] = await eventually(async () => {
      const rows = await actionsOf(h, firing!.id);
      return rows[0]?.state === 'sent' ? rows : undefined;
    });
    expect(action).toMatchObject({ state: 'sent', attempt_count: 1 });
    expect(await firingsOf(h, rule)).toHaveLength(1);
    expect(receiver.delivered()).toHaveLength(1);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await receiver.close();
  }
});
