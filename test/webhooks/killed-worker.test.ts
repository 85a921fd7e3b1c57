// A worker killed mid-delivery loses nothing: the real worker (a child process) is SIGKILLed while
// the receiver holds its request open; another worker makes the attempt again, and the receiver
// gets the same message (same webhook-id, same bytes), which it can deduplicate.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WebHandle } from '../../src/server.ts';
import type { WorkerHandle } from '../../src/worker.ts';
import { testEncryptionKey } from '../support/config.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { apiFor, startReceiver, startWebhookWorker, verified } from './support.ts';
import { eventually } from '../support/probes.ts';

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

it('the message still arrives, with the same id, after its worker was killed mid-request', async () => {
  const env = await createTestEnv(h.db);
  const api = apiFor(web, env.secretKey, env.env.name);
  // The first request is held open (the worker is killed while it waits); later ones succeed.
  const receiver = await startReceiver((_r, n) => (n === 1 ? 'hang' : 200));
  const child = spawn(process.execPath, ['workers/main.ts'], {
    env: { ...process.env, DATABASE_URL: h.database.url, CAIRN_ENCRYPTION_KEY: testEncryptionKey, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = once(child, 'exit');
  try {
    const created = await api<{ secret: string }>('POST', '/webhook_endpoints', {
      url: receiver.url,
      event_types: ['end_user.created'],
    });
    expect(created.status).toBe(201);
    expect((await api('POST', '/end_users', { email: 'killed@example.com' })).status).toBe(201);
    const [held] = await receiver.waitFor(1, undefined, 30_000);
    child.kill('SIGKILL');
    await exited;
    // Nothing was recorded: the attempt never finished.
    expect(await h.db('webhook_attempts')).toEqual([]);

    worker = (await startWebhookWorker(h)) as unknown as WorkerHandle<Record<string, never>>;
    const [, again] = await receiver.waitFor(2, undefined, 90_000);
    expect(again!.id).toBe(held!.id);
    expect(again!.body).toBe(held!.body);
    expect(verified(created.body.secret, again!).type).toBe('end_user.created');
    await eventually(async () => {
      const d = await h.db('webhook_deliveries').first('state', 'attempt_count');
      return (d as { state: string } | undefined)?.state === 'succeeded';
    });
    expect(await h.db('webhook_deliveries').first('attempt_count')).toEqual({ attempt_count: 1 });
    expect(receiver.delivered().map((r) => r.id)).toEqual([held!.id]);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await receiver.close();
  }
});
