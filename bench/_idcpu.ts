// Identity benchmark: password sign-in with the OWASP argon2id parameters at a paced
// 20 sign-ins/s (p50, p99) while GET /v1/client/session is polled (its p99 shows whether the
// event loop is ever blocked), then sign-ins/s at saturation against bare argon2 verifications/s
// measured in the same run. Uses a throw-away database on DATABASE_URL's server.
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

  const { readFileSync, readdirSync } = await import('node:fs');
  const threads = () => {
    const out: Record<string, number> = {};
    for (const t of readdirSync('/proc/self/task')) {
      const st = readFileSync(`/proc/self/task/${t}/stat`, 'utf8');
      const comm = st.slice(st.indexOf('(') + 1, st.lastIndexOf(')'));
      const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
      const k = t === String(process.pid) ? 'main' : comm;
      out[k] = (out[k] ?? 0) + (Number(f[11]) + Number(f[12])) * 10;
    }
    return out;
  };
  const pgCpu = () => {
    let sum = 0;
    for (const p of readdirSync('/proc')) {
      if (!/^\d+$/.test(p)) continue;
      try {
        const st = readFileSync(`/proc/${p}/stat`, 'utf8');
        if (!st.includes('(postgres)')) continue;
        const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
        sum += (Number(f[11]) + Number(f[12])) * 10;
      } catch {}
    }
    return sum;
  };
  const hash = await argon2.hash(password, passwordParams);
  for (const [label, fn, lanes] of [['bare', () => argon2.verify(hash, password), 4], ['sign-in', () => signIn(), 8]] as const) {
    const t0 = threads(); const p0 = pgCpu();
    const rate = await saturate(lanes, 5000, fn as () => Promise<unknown>);
    const t1 = threads(); const p1 = pgCpu();
    const n = rate * 5;
    const per: Record<string, string> = {};
    for (const k of Object.keys(t1)) per[k] = ((t1[k]! - (t0[k] ?? 0)) / n).toFixed(2);
    console.log(label, rate.toFixed(1), '/s; CPU ms per op by thread', JSON.stringify(per), 'postgres', ((p1 - p0) / n).toFixed(2));
  }
  } finally {
  await web.stop();
  await db.destroy();
  await withAdmin((c) => c.query(`drop database if exists ${name} with (force)`), admin);
}
