// Fair intake and the web process's footprint, every figure from one run. One web process as the
// Procfile starts it, against a scratch database, with no worker (the intake only grows); this
// process is the client.
//   singles:  single captures at a steady 200/s, open loop (a request's time counts from when it
//             was due, so a stalled server cannot hide its queue), alone (the baseline), then beside
//             2,000 batched events/s (two 1000-event batchCaptures of ~2 KB events a second);
//   big:      a fresh web process taking 20 MiB batchCaptures (1000 events of ~20 KB), two in
//             flight, beside the same singles: their latency, and the web's peak RSS (VmHWM).
// Goals (the durability issue): single p99 < 100 ms beside the batches; web peak RSS < 256 MB.
// Env: DATABASE_URL and the S3 variables of the tests; BENCH_FAIR_SECONDS (10), BENCH_FAIR_BIG
// (20 MiB batches sent, 12), BENCH_FAIR_PARTS (singles,big), BENCH_FAIR_NODE_FLAGS (extra node flags
// for the web process).
import { keyringFromConfig } from '../src/crypto.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDb } from '../src/db.ts';
import { createEnvWithKeys } from '../src/domain/tenancy/envs.ts';
import { runMigrations } from '../src/migrate.ts';
import {
  procfileArgs,
  procStatusBytes,
  quantile,
  report,
  repoRoot,
  scratchDatabase,
  freePort,
  jsonPoster,
} from './support.ts';

const seconds = Number(process.env.BENCH_FAIR_SECONDS ?? 10);
const bigBatches = Number(process.env.BENCH_FAIR_BIG ?? 12);
const parts = new Set((process.env.BENCH_FAIR_PARTS ?? 'singles,big').split(','));
const singleRate = 200;
const batchesPerSecond = 2;

const scratch = await scratchDatabase();
const config = scratch.config;
const db = createDb(config);
const children: ChildProcess[] = [];

interface Web {
  child: ChildProcess;
  post(path: string, body: Buffer): Promise<number>;
  stop(): Promise<void>;
}

async function startWeb(envName: string, key: string): Promise<Web> {
  const port = await freePort();
  // BENCH_FAIR_NODE_FLAGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) goes before the Procfile's own flags.
  const flags = (process.env.BENCH_FAIR_NODE_FLAGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...flags, ...procfileArgs('web')], {
    cwd: repoRoot,
    env: {
      ...process.env,
      DATABASE_URL: config.DATABASE_URL,
      CAIRN_ENCRYPTION_KEY: config.CAIRN_ENCRYPTION_KEY,
      PORT: String(port),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', openSync(`${tmpdir()}/cairn-bench-fairness-web.log`, 'w'), 'inherit'],
  });
  children.push(child);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const post = jsonPoster(agent, port, key, `/v1/${envName}`);
  for (let i = 0; ; i++) {
    const status = await post('/error_groups:capture', Buffer.from('{}')).catch(() => 0);
    if (status === 400) break;
    if (i > 600) throw new Error('the web process did not start');
    await sleep(50);
  }
  return {
    child,
    post,
    async stop() {
      agent.destroy();
      child.kill('SIGTERM');
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    },
  };
}

/** An event of about `bytes` bytes of JSON: a 20-frame stack and as many breadcrumbs as it takes. */
function event(i: number, bytes: number): Record<string, unknown> {
  const stack = [
    'TypeError: Cannot read properties of undefined',
    ...Array.from(
      { length: 20 },
      (_, k) => `    at handler${(i + k) % 97} (https://shop.example.com/assets/main.1a2b3c4d.js:1:${1000 + k * 37})`,
    ),
  ].join('\n');
  const base = {
    event_time: new Date(Date.UTC(2026, 10, 21, 12, 0, 0, i % 1000)).toISOString(),
    exception_type: 'TypeError',
    message: `Cannot read properties of undefined (reading 'id') for order ${i}`,
    stack,
    release: 'web@1.4.2',
    service_name: 'shop',
    tags: { route: `/orders/${i % 20}`, browser: 'Chrome 131' },
  };
  const crumbs: Record<string, unknown>[] = [];
  let size = JSON.stringify(base).length;
  while (size < bytes && crumbs.length < 100) {
    const crumb = {
      timestamp: '2026-11-21T11:59:59.000Z',
      category: 'fetch',
      message: `GET https://api.shop.example.com/v2/orders/${i}/items?page=${crumbs.length} ${'x'.repeat(120)}`,
      data: { status_code: 200, duration_ms: 42, body: 'y'.repeat(80) },
    };
    crumbs.push(crumb);
    size += JSON.stringify(crumb).length + 1;
  }
  return { ...base, breadcrumbs: crumbs };
}

const batchBody = (from: number, count: number, eventBytes: number) =>
  Buffer.from(JSON.stringify({ error_events: Array.from({ length: count }, (_, k) => event(from + k, eventBytes)) }));

/**
 * Posts `bodies` in turn at `rate` a second until `done`, open loop (each request is sent when it is
 * due, whatever the earlier ones are doing): milliseconds from due to answered, sorted.
 */
async function openLoop(web: Web, path: string, bodies: Buffer[], rate: number, done: (sent: number) => boolean) {
  const latencies: number[] = [];
  const inFlight: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; !done(i); i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    inFlight.push(
      web.post(path, bodies[i % bodies.length]!).then((status) => {
        if (status !== 202) throw new Error(`${path} answered ${status}`);
        latencies.push(performance.now() - due);
      }),
    );
  }
  await Promise.all(inFlight);
  return latencies.sort((a, b) => a - b);
}

const singleBodies = Array.from({ length: 100 }, (_, i) =>
  Buffer.from(JSON.stringify({ error_event: event(i, 2000) })),
);

/** Single captures at `singleRate` for `forSeconds`, or until `stop` says so. */
const singles = (web: Web, forSeconds: number, stop?: () => boolean) =>
  openLoop(web, '/error_groups:capture', singleBodies, singleRate, (i) =>
    stop ? stop() : i >= singleRate * forSeconds,
  );

const summary = (label: string, l: number[]) => ({
  [`${label}: p50 ms`]: quantile(l, 0.5),
  [`${label}: p99 ms`]: quantile(l, 0.99),
  [`${label}: max ms`]: l[l.length - 1] ?? NaN,
});

try {
  await runMigrations(config);
  const env = await createEnvWithKeys(db, 'orgs/bench/projects/fairness/envs/prod', 'test', keyringFromConfig(config));
  // The intake only grows here (no worker): no backpressure may engage.
  await db('error_settings')
    .insert({ env_id: env.env.id, retention_days: 90, max_pending: 10_000_000 })
    .onConflict('env_id')
    .merge();
  const envName = env.env.name;

  if (parts.has('singles')) {
    const web = await startWeb(envName, env.secretKey);
    await singles(web, 2); // warm the connections and the code
    const alone = await singles(web, seconds);
    const batches = Array.from({ length: 4 }, (_, b) => batchBody(b * 1000, 1000, 2000));
    let sending = true;
    const batchLoop = openLoop(web, '/error_groups:batchCapture', batches, batchesPerSecond, () => !sending);
    const beside = await singles(web, seconds);
    sending = false;
    const batchTimes = await batchLoop;
    await web.stop();
    report(
      `singles (${singleRate}/s, open loop) alone and beside ${batchesPerSecond * 1000} batched events/s (${(batches[0]!.length / 1e6).toFixed(1)} MB per batch)`,
      {
        ...summary('alone', alone),
        ...summary('beside batches', beside),
        'p99 beside / p99 alone': quantile(beside, 0.99) / quantile(alone, 0.99),
        'single p99 beside batches, ms (goal < 100)': quantile(beside, 0.99),
        'batchCapture p50 ms': quantile(batchTimes, 0.5),
        'batchCapture p99 ms': quantile(batchTimes, 0.99),
      },
    );
  }

  if (parts.has('big')) {
    const web = await startWeb(envName, env.secretKey);
    await singles(web, 1);
    const idle = procStatusBytes(web.child.pid!, 'VmRSS');
    const bodies = Array.from({ length: 2 }, (_, b) => batchBody(b * 1000, 1000, 20_000));
    let sent = 0;
    const bigTimes: number[] = [];
    const t = performance.now();
    const senders = Array.from({ length: 2 }, async () => {
      while (sent < bigBatches) {
        const body = bodies[sent++ % bodies.length]!;
        const started = performance.now();
        const status = await web.post('/error_groups:batchCapture', body);
        if (status !== 202) throw new Error(`batchCapture answered ${status}`);
        bigTimes.push(performance.now() - started);
      }
    });
    let done = false;
    const all = Promise.all(senders).finally(() => (done = true));
    const beside = await singles(web, 0, () => done);
    await all;
    const elapsed = (performance.now() - t) / 1000;
    const peak = procStatusBytes(web.child.pid!, 'VmHWM');
    bigTimes.sort((a, b) => a - b);
    await web.stop();
    report(
      `big batches (${bigBatches} of ${(bodies[0]!.length / 1048576).toFixed(1)} MiB, two in flight) beside ${singleRate} singles/s`,
      {
        '20 MiB batches, MiB/s accepted': (bigBatches * bodies[0]!.length) / 1048576 / elapsed,
        'batchCapture p50 s': quantile(bigTimes, 0.5) / 1000,
        ...summary('singles beside 20 MiB batches', beside),
        'web RSS idle, MB': idle / 1e6,
        'web peak RSS (VmHWM), MB (goal < 256)': peak / 1e6,
      },
    );
  }
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  await db.destroy();
  await scratch.drop();
}
