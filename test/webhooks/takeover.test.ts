// A worker process killed with attempts in flight has them taken over within ~3 s, by the real
// worker (a child process, SIGKILLed while its receiver holds both requests open) and a survivor:
// the attempts go out again at once with the same webhook-id, and a healthy endpoint of the same
// environment, whose attempt waited for the slots the dead worker's attempts held, is delivered
// without waiting for pg-boss's heartbeat. Every delivery is recorded once. A frozen worker (its
// connections kept) keeps its attempts: only its death hands them over.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { WebHandle } from '../../src/server.ts';
import type { WorkerHandle } from '../../src/worker.ts';
import { testEncryptionKey } from '../support/config.ts';
import { createTestEnv, type Harness, useWeb } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { apiFor, startReceiver, startWebhookWorker } from './support.ts';

let h: Harness;
let web: WebHandle;
let survivor: WorkerHandle<Record<string, never>> | undefined;

const stack = useWeb();
beforeAll(async () => {
  ({ h, web } = stack);
});

afterAll(async () => {
  await survivor?.stop();
});

it("takes a killed worker's attempts over within ~3 s, and a healthy endpoint does not wait for them", async () => {
  const env = await createTestEnv(h.db);
  const api = apiFor(web, env.secretKey, env.env.name);
  // Its first two requests are held open: the worker is killed while it waits on both.
  const held = await startReceiver((_r, n) => (n <= 2 ? 'hang' : 200));
  const healthy = await startReceiver(() => 204);
  const child = spawn(process.execPath, ['workers/main.ts'], {
    env: { ...process.env, DATABASE_URL: h.database.url, CAIRN_ENCRYPTION_KEY: testEncryptionKey, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = once(child, 'exit');
  try {
    const made = async (url: string, type: string) =>
      expect((await api('POST', '/webhook_endpoints', { url, event_types: [type] })).status).toBe(201);
    await made(held.url, 'end_user.created');
    await made(healthy.url, 'end_user.deleted');
    const users: string[] = [];
    for (const email of ['a@example.com', 'b@example.com']) {
      const r = await api<{ id: string }>('POST', '/end_users', { email });
      expect(r.status).toBe(201);
      users.push(r.body.id);
    }
    // New endpoints share their environment's slow lane: two attempts at once, both now held.
    const first = await held.waitFor(2, undefined, 30_000);
    survivor = (await startWebhookWorker(h)) as unknown as WorkerHandle<Record<string, never>>;
    // The healthy endpoint's attempt waits behind them, for a slot of the environment.
    expect((await api('DELETE', `/end_users/${users[0]}`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    expect(healthy.received).toEqual([]);

    const killed = Date.now();
    child.kill('SIGKILL');
    await exited;
    const again = await held.waitFor(4, undefined, 30_000);
    const [healthyAttempt] = await healthy.waitFor(1, undefined, 30_000);
    const retriedIn = Math.max(again[2]!.at, again[3]!.at) - killed;
    const healthyIn = healthyAttempt!.at - killed;
    console.log(`takeover: attempts again after ${retriedIn} ms, healthy endpoint after ${healthyIn} ms`);
    expect(retriedIn).toBeLessThan(3500);
    expect(healthyIn).toBeLessThan(3500);

    // The same messages went out again; each delivery is recorded once, succeeded at its first attempt.
    expect(new Set(again.slice(2).map((r) => r.id))).toEqual(new Set(first.map((r) => r.id)));
    await eventually(async () => {
      const rows = (await h.db('webhook_deliveries').select('state')) as { state: string }[];
      return rows.length === 3 && rows.every((r) => r.state === 'succeeded');
    });
    expect(await h.db('webhook_deliveries').select('attempt_count')).toEqual(
      Array.from({ length: 3 }, () => ({ attempt_count: 1 })),
    );
    expect(await h.db('webhook_attempts').count('* as n')).toEqual([{ n: '3' }]);
    expect(held.delivered()).toHaveLength(2);
    expect(healthy.received).toHaveLength(1);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await held.close();
    await healthy.close();
  }
});

it("leaves a frozen worker's attempt alone, and takes it over once the worker is killed", async () => {
  const env = await createTestEnv(h.db);
  const api = apiFor(web, env.secretKey, env.env.name);
  const held = await startReceiver((_r, n) => (n === 1 ? 'hang' : 200));
  const child = spawn(process.execPath, ['workers/main.ts'], {
    env: { ...process.env, DATABASE_URL: h.database.url, CAIRN_ENCRYPTION_KEY: testEncryptionKey, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = once(child, 'exit');
  try {
    await survivor?.stop();
    survivor = undefined;
    expect((await api('POST', '/webhook_endpoints', { url: held.url, event_types: ['end_user.created'] })).status).toBe(
      201,
    );
    expect((await api('POST', '/end_users', { email: 'frozen@example.com' })).status).toBe(201);
    const [first] = await held.waitFor(1, undefined, 30_000);
    survivor = (await startWebhookWorker(h)) as unknown as WorkerHandle<Record<string, never>>;
    child.kill('SIGSTOP');
    // Several of the survivor's passes (one a second) find the frozen worker's lock held.
    await new Promise((r) => setTimeout(r, 3000));
    expect(held.received).toHaveLength(1);

    const killed = Date.now();
    child.kill('SIGKILL');
    await exited;
    const [, again] = await held.waitFor(2, undefined, 30_000);
    expect(again!.id).toBe(first!.id);
    expect(again!.at - killed).toBeLessThan(3500);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await held.close();
  }
});
