// The connection budget (db.ts connectionShares): 2 web + 2 worker processes, as the Procfile
// starts them, never hold more than 20 connections to Cairn's database together while they accept
// and process captures, and a retired variable is refused at start-up with what to set instead.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectionShares } from '../../src/db.ts';
import { testEncryptionKey } from '../support/config.ts';
import { createHarness, createTestEnv, call, type Harness } from '../support/harness.ts';
import { eventually } from '../support/probes.ts';
import { sampleEvent } from '../observability/support.ts';

let h: Harness;
const children: ChildProcess[] = [];
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await h?.close();
});

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });

function start(role: 'web' | 'worker', env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const args = role === 'web' ? ['--max-semi-space-size=8', 'src/web.ts'] : ['workers/main.ts'];
  const child = spawn(process.execPath, args, {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/root',
      DATABASE_URL: h.config.DATABASE_URL,
      CAIRN_ENCRYPTION_KEY: testEncryptionKey,
      AWS_ENDPOINT_URL_S3: process.env.AWS_ENDPOINT_URL_S3 ?? '',
      AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
      AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? '',
      AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? '',
      CAIRN_S3_FORCE_PATH_STYLE: process.env.CAIRN_S3_FORCE_PATH_STYLE ?? 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  children.push(child);
  return { child, output: () => out };
}

const connections = async () =>
  Number(
    (
      await h.db.raw<{ rows: { n: string }[] }>(
        "select count(*) as n from pg_stat_activity where datname = current_database() and application_name like 'cairn-%'",
      )
    ).rows[0]!.n,
  );

describe('the connection budget', () => {
  it('splits a process budget of 4 (web) and 6 (worker) so that 2 of each make 20', () => {
    const web = connectionShares({}, 'web');
    const worker = connectionShares({}, 'worker');
    for (const s of [web, worker]) expect(s.knex + s.boss + s.sessions).toBe(s.total);
    expect(2 * web.total + 2 * worker.total).toBe(20);
    // A worker's pg-boss pool holds one connection per transactional handler running (2) and one more.
    expect(worker).toEqual({ total: 6, knex: 2, boss: 3, sessions: 1 });
    expect(connectionShares({ CAIRN_DB_MAX_CONNECTIONS: 12 }, 'worker')).toEqual({
      total: 12,
      knex: 7,
      boss: 4,
      sessions: 1,
    });
    expect(() => connectionShares({ CAIRN_DB_MAX_CONNECTIONS: 5 }, 'worker')).toThrow(/a worker needs at least 6/);
  });

  it('holds 2 web + 2 worker processes within 20 connections while they take and process captures', async () => {
    const env = await createTestEnv(h.db);
    const webs = await Promise.all([0, 1].map(async () => ({ port: await freePort() })));
    const procs = [
      ...webs.map((w) => start('web', { PORT: String(w.port) })),
      start('worker', {}),
      start('worker', {}),
    ];
    for (const w of webs)
      await eventually(async () => (await fetch(`http://127.0.0.1:${w.port}/healthz`).catch(() => null))?.ok === true);
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await connections());
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const path = `/v1/${env.env.name}/error_groups`;
    const batches = Array.from({ length: 6 }, (_, i) =>
      call(`http://127.0.0.1:${webs[i % 2]!.port}`, 'POST', `${path}:batchCapture`, {
        key: env.secretKey,
        body: { error_events: Array.from({ length: 200 }, (_, k) => sampleEvent({ message: `b${i}-${k}` })) },
      }),
    );
    const singles = Array.from({ length: 200 }, (_, i) =>
      call(`http://127.0.0.1:${webs[i % 2]!.port}`, 'POST', `${path}:capture`, {
        key: env.secretKey,
        body: { error_event: sampleEvent({ message: `s${i}` }) },
      }),
    );
    const answers = await Promise.all([...batches, ...singles]);
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 202));
    await eventually(async () => Number((await h.db('error_events').count({ n: '*' }).first())?.n) === 6 * 200 + 200, {
      timeoutMs: 60_000,
    });
    sampling = false;
    await sampler;
    expect(peak).toBeGreaterThan(4);
    expect(peak).toBeLessThanOrEqual(20);
    for (const p of procs) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => (p.child.exitCode === null ? once(p.child, 'exit') : undefined)));
  });

  it('refuses CAIRN_DB_POOL_MAX at start-up, naming what to set instead', async () => {
    const p = start('web', { CAIRN_DB_POOL_MAX: '5' });
    const [code] = (await once(p.child, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(p.output()).toMatch(/CAIRN_DB_POOL_MAX was replaced by CAIRN_DB_MAX_CONNECTIONS/);
  });
});
