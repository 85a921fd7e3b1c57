// The rule "a worker killed with SIGKILL mid-batch loses and duplicates nothing". Real worker
// processes (test/errors/fixtures/ingest-worker.ts: the real worker, its supervisor looking
// every second) are killed while they hold claimed jobs; once their heartbeat stops, the jobs are
// retried and a fresh worker takes them over, and every accepted event is stored exactly once,
// with the group counts (and the groups' tag counts) to match.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyringFromConfig } from '../../src/crypto.ts';
import { acceptEvents } from '../../src/domain/errors/intake/capture.ts';
import { errorEventInput } from '../../src/contract/error-capture.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { operationsQueries } from '../../src/domain/operations/queries.ts';
import { createBoss, Jobs } from '../../src/jobs/index.ts';
import { queues } from '../../src/queues.ts';
import { testEncryptionKey } from '../support/config.ts';
import { createHarness, createTestEnv, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { procfileArgs } from '../support/procfile.ts';
import { sampleEvent } from './support.ts';

let h: Harness;
let env: CreatedEnv;
let jobs: Jobs;
const children: ChildProcess[] = [];

beforeAll(async () => {
  h = await createHarness();
  env = await createTestEnv(h.db);
  const boss = createBoss(h.config, 'web');
  await boss.start();
  jobs = new Jobs(boss, queues);
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await jobs?.boss.stop({ graceful: false, close: true });
  await h?.close();
});

type WorkerProcess = { child: ChildProcess; output: () => string; started: Date };

/** The test's worker (supervisor every second), or with `procfile` the Procfile's own command. */
function startWorkerProcess(procfile = false): WorkerProcess {
  const started = new Date(Date.now() - 1000); // the database's clock may run a little behind
  const args = procfile ? procfileArgs('worker') : ['test/errors/fixtures/ingest-worker.ts'];
  const child = spawn(process.execPath, args, {
    env: {
      ...process.env,
      DATABASE_URL: h.config.DATABASE_URL,
      CAIRN_ENCRYPTION_KEY: testEncryptionKey,
      LOG_LEVEL: procfile ? 'info' : 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  return { child, output: () => out, started };
}

// What waits, read as an operator reads it (`cairn admin status`), and what is stored.
const state = async () => ({
  queued: (await operationsQueries(h.db).intake()).pending,
  stored: Number((await h.db('error_events').where({ env_id: env.env.id }).count({ n: '*' }).first())?.n),
});

/** The events of jobs claimed since `since` and not settled: what a worker started then holds. */
const heldSince = async (since: Date) =>
  (
    await h.db.raw<{ rows: { uid: string }[] }>(
      `select e->>'uid' as uid from pgboss.job, jsonb_array_elements(data->'events') e
        where name = 'errors.ingest' and state = 'active' and started_on >= ?`,
      [since],
    )
  ).rows.map((r) => r.uid);

/**
 * Kills the worker with SIGKILL while it holds claimed rows and has stored some already. It is
 * frozen with SIGSTOP first, so that what it holds cannot change between the look and the kill
 * (CI once saw the batch finish in that window); the short pause lets Postgres settle a COMMIT
 * already on the wire, so the rows listed are exactly what the worker held. If the frozen worker
 * holds nothing, it is thawed and the look repeats.
 */
async function killMidBatch(worker: WorkerProcess, storedBefore: number): Promise<string[]> {
  const held = await freezeHolding(worker, async () => (await state()).stored > storedBefore);
  worker.child.kill('SIGKILL');
  await once(worker.child, 'exit');
  // An uncommitted transaction of the frozen worker rolls back on the kill, so every job it
  // held is still queued for the next worker.
  return held;
}

/** Freezes the worker (SIGSTOP) once `ready` and while it holds claimed rows; returns what it holds. */
async function freezeHolding(worker: WorkerProcess, ready: () => Promise<boolean>): Promise<string[]> {
  for (;;) {
    await eventually(
      async () => {
        if (worker.child.exitCode !== null) throw new Error(`worker exited early:\n${worker.output()}`);
        return (await ready()) && (await heldSince(worker.started)).length > 0;
      },
      { timeoutMs: 45_000, intervalMs: 10 },
    );
    worker.child.kill('SIGSTOP');
    await new Promise((r) => setTimeout(r, 50));
    const held = await heldSince(worker.started);
    if (held.length > 0) return held;
    worker.child.kill('SIGCONT');
  }
}

const types = ['KillError', 'CrashError', 'AbortError', 'LostError', 'DeadError'];

async function acceptMany(envId: string, n: number): Promise<string[]> {
  const payloads = Array.from({ length: n }, (_, i) =>
    errorEventInput.parse(
      sampleEvent({
        exception_type: types[i % types.length],
        message: `crash ${i}`,
        event_time: new Date(Date.UTC(2026, 10, 21, 12, 0, 0, i)).toISOString(),
      }),
    ),
  );
  const accepted: string[] = [];
  for (let i = 0; i < payloads.length; i += 1000)
    accepted.push(
      ...(await acceptEvents(
        { db: h.db, cell: 'c0', keyring: keyringFromConfig(h.config), jobs },
        envId,
        payloads.slice(i, i + 1000),
      )),
    );
  return accepted;
}

const storedOf = async (uids: string[]) =>
  Number(
    await h
      .db('error_events')
      .whereIn('uid', uids)
      .count({ n: '*' })
      .first()
      .then((r) => r?.n),
  );

describe('a worker killed with SIGKILL mid-batch', () => {
  it('loses nothing and stores nothing twice once a fresh worker takes over', async () => {
    const accepted = await acceptMany(env.env.id, 3000);

    // Two workers in turn die holding batches; the second starts while the first one's claims still look active.
    const first = startWorkerProcess();
    const heldByFirst = await killMidBatch(first, 0);
    expect(heldByFirst.length).toBeGreaterThan(0);
    const second = startWorkerProcess();
    const heldBySecond = await killMidBatch(second, (await state()).stored);
    expect(heldBySecond.length).toBeGreaterThan(0);
    expect((await state()).queued).toBeGreaterThan(0);

    const fresh = startWorkerProcess();
    await eventually(
      async () => {
        if (fresh.child.exitCode !== null) throw new Error(`worker exited early:\n${fresh.output()}`);
        return (await state()).queued === 0;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );

    const stored = await h.db('error_events').where({ env_id: env.env.id }).pluck('uid');
    expect(stored.length).toBe(accepted.length);
    expect(new Set(stored)).toEqual(new Set(accepted));
    for (const uid of [...heldByFirst, ...heldBySecond]) expect(stored).toContain(uid);
    const groups = await h.db('error_groups').where({ env_id: env.env.id }).select('id', 'occurrence_count');
    expect(groups).toHaveLength(types.length);
    for (const g of groups) {
      const n = await h.db('error_events').where({ group_id: g.id }).count({ n: '*' }).first();
      expect(Number(g.occurrence_count)).toBe(Number(n?.n));
      expect(Number(g.occurrence_count)).toBe(accepted.length / types.length);
      // Its facets with it: every stored event carries the built-in level tag, counted once.
      const level = await h
        .db('error_group_tags')
        .where({ group_id: g.id, key: 'level', value: 'error' })
        .first('count');
      expect(Number(level?.count)).toBe(Number(n?.n));
    }
    expect(await operationsQueries(h.db).deadLetters()).toBe(0);

    fresh.child.kill('SIGTERM');
    const [code] = (await once(fresh.child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });

  it('has its batch taken over by a running worker within 10 s, not after the heartbeat', async () => {
    const other = await createTestEnv(h.db);
    const accepted = await acceptMany(other.env.id, 12_000);
    const stored = async () =>
      Number((await h.db('error_events').where({ env_id: other.env.id }).count({ n: '*' }).first())?.n);
    // Both run the Procfile's command, with production settings: pg-boss's heartbeat (10 s) and
    // its supervisor's pass (10 s) would take 10-20 s; the claim lock is what makes it quick.
    const doomed = startWorkerProcess(true);
    // Frozen while it holds a batch, before the survivor starts, so that what it holds is known.
    const held = await freezeHolding(doomed, async () => (await stored()) > 0);
    const survivor = startWorkerProcess(true);
    await eventually(() => /worker started/.test(survivor.output()), { timeoutMs: 45_000, intervalMs: 20 });
    doomed.child.kill('SIGKILL');
    await once(doomed.child, 'exit');
    const killed = Date.now();
    await eventually(async () => (await storedOf(held)) === held.length, { timeoutMs: 30_000, intervalMs: 50 });
    const tookMs = Date.now() - killed;
    expect(tookMs).toBeLessThan(10_000);
    expect(survivor.output()).toMatch(/took over the jobs of a worker that is gone/);

    await eventually(async () => (await state()).queued === 0, { timeoutMs: 60_000, intervalMs: 50 });
    const uids = await h.db('error_events').where({ env_id: other.env.id }).pluck('uid');
    expect(uids.length).toBe(accepted.length);
    expect(new Set(uids)).toEqual(new Set(accepted));
    survivor.child.kill('SIGTERM');
    expect(((await once(survivor.child, 'exit')) as [number | null])[0]).toBe(0);
  });
});
