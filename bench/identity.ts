// Identity benchmark: password sign-in with the OWASP argon2id parameters at a paced
// 20 sign-ins/s (p50, p99) while GET /v1/client/session is polled (its p99 shows whether the
// event loop is ever blocked), then sign-ins/s at saturation against bare argon2 verifications/s
// measured in the same run, with what a sign-in costs beside its argon2 (CPU by thread of this
// process, which runs the web and the client, and of the database's backends). Uses a throw-away
// database on DATABASE_URL's server.
// Run: node bench/identity.ts   (env: DATABASE_URL, BENCH_SECONDS=5)
import { idleJobs } from '../test/support/jobs.ts';
import { keyringFromConfig } from '../src/crypto.ts';
import { randomBytes } from 'node:crypto';
import argon2 from 'argon2';
import { loadConfig } from '../src/config.ts';
import { createDb } from '../src/db.ts';
import { passwordParams } from '../src/domain/identity/passwords.ts';
import { createEndUser } from '../src/domain/identity/users/users.ts';
import { createEnvWithKeys } from '../src/domain/tenancy/envs.ts';
import { runMigrations } from '../src/migrate.ts';
import { startWeb } from '../src/server.ts';
import { databaseUrl, withAdmin } from '../test/support/pg.ts';
import { postgresCpu, postgresCpuSince, threadCpu, threadCpuSince } from './cpu.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const password = 'correct horse battery staple 42';
const admin = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `cairn_bench_${randomBytes(4).toString('hex')}`;

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

/** Runs `worker` on `concurrency` lanes for `ms`; answers completions per second. */
async function saturate(concurrency: number, ms: number, worker: () => Promise<unknown>): Promise<number> {
  const end = performance.now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await worker();
        done += 1;
      }
    }),
  );
  return done / (ms / 1000);
}

await withAdmin((c) => c.query(`create database ${name}`), admin);
const config = loadConfig({
  ...process.env,
  DATABASE_URL: databaseUrl(name, admin),
  CAIRN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  LOG_LEVEL: 'silent',
  CAIRN_DB_MAX_CONNECTIONS: '11',
});
await runMigrations(config);
const db = createDb(config);
const web = await startWeb(config, { host: '127.0.0.1', port: 0 });
try {
  const env = await createEnvWithKeys(db, 'orgs/bench/projects/bench/envs/bench', 'test', keyringFromConfig(config));
  const unlimited = { points: 1_000_000, seconds: 60 };
  await db('envs')
    .where({ id: env.env.id })
    .update({ settings: { identity: { rate_limits: { sign_in: unlimited } } } });
  await createEndUser({ db: db, jobs: idleJobs(config) }, env.env.id, {
    email: 'bench@example.com',
    password,
    email_verified: true,
  });
  const signIn = async (mode: 'server' | 'browser' = 'server') => {
    const res = await fetch(`${web.url}/v1/client/sign-in/password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'cairn-publishable-key': env.publishableKey },
      body: JSON.stringify({ identifier: 'bench@example.com', password, session_mode: mode }),
    });
    if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
    return (await res.json()) as { session_token?: string };
  };
  const { session_token: token } = await signIn('browser');
  const getSession = async () => {
    const res = await fetch(`${web.url}/v1/client/session`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) throw new Error(`session answered ${res.status}`);
    await res.arrayBuffer();
  };
  for (let i = 0; i < 10; i++) await Promise.all([signIn(), getSession()]); // warm-up

  // 1. Paced: 20 sign-ins/s for `seconds`, with session reads at 50/s alongside.
  const signInMs: number[] = [];
  const sessionMs: number[] = [];
  const pace = async (perSecond: number, out: number[], fn: () => Promise<unknown>) => {
    const started = performance.now();
    const pending: Promise<void>[] = [];
    for (let i = 0; i < perSecond * seconds; i++) {
      const due = started + (i * 1000) / perSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push(timed(fn).then((ms) => void out.push(ms)));
    }
    await Promise.all(pending);
  };
  await Promise.all([pace(20, signInMs, () => signIn()), pace(50, sessionMs, getSession)]);

  // 2. Saturation: sign-ins/s with many in flight, against bare argon2 verifications/s.
  const hash = await argon2.hash(password, passwordParams);
  const lanes = Number(process.env.UV_THREADPOOL_SIZE ?? 4);
  // Interleaved one-second rounds, so load from other processes on the machine hits both alike.
  // Each side's CPU by thread (and the database's backends for sign-in), summed over its rounds.
  let bare = 0;
  let full = 0;
  const bareCpu = new Map<string, number>();
  const fullCpu = new Map<string, number>();
  let fullPostgres = 0;
  const add = (into: Map<string, number>, from: Map<string, number>) => {
    for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
  };
  for (let round = 0; round < seconds; round++) {
    let threads = threadCpu();
    bare += await saturate(lanes, 1000, () => argon2.verify(hash, password));
    add(bareCpu, threadCpuSince(threads));
    threads = threadCpu();
    const backends = await postgresCpu(db, name);
    full += await saturate(lanes * 2, 1000, () => signIn());
    add(fullCpu, threadCpuSince(threads));
    fullPostgres += await postgresCpuSince(db, name, backends);
  }
  // CPU ms per operation: seconds over `rate × seconds` operations.
  const per = (cpuSeconds: number, rate: number) => `${((cpuSeconds * 1000) / (rate * seconds)).toFixed(2)} ms`;
  const others = (cpu: Map<string, number>) =>
    [...cpu].filter(([k]) => k !== 'main' && k !== 'libuv-worker').reduce((a, [, v]) => a + v, 0);
  bare /= seconds;
  full /= seconds;

  const report = {
    'sign-in at 20/s p50': fmt(pct(signInMs, 50)),
    'sign-in at 20/s p99': fmt(pct(signInMs, 99)),
    'GET /v1/client/session p99 meanwhile': fmt(pct(sessionMs, 99)),
    'bare argon2id verifications/s': bare.toFixed(1),
    'sign-ins/s at saturation': full.toFixed(1),
    'saturation ratio (goal >= 0.90)': (full / bare).toFixed(2),
    'CPU per bare verification: thread pool': per(bareCpu.get('libuv-worker') ?? 0, bare),
    'CPU per sign-in: thread pool (argon2)': per(fullCpu.get('libuv-worker') ?? 0, full),
    '  event loop (the web and this client)': per(fullCpu.get('main') ?? 0, full),
    '  other threads (V8 GC helpers)': per(others(fullCpu), full),
    '  Postgres backends': per(fullPostgres, full),
  };
  for (const [k, v] of Object.entries(report)) process.stdout.write(`${k.padEnd(40)} ${v}\n`);
} finally {
  await web.stop();
  await db.destroy();
  await withAdmin((c) => c.query(`drop database if exists ${name} with (force)`), admin);
}
