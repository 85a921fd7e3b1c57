// The measured inputs of the capacity model (docs/operations.md "Capacity"), and one of its points
// checked, every figure from one run:
//   events: single captures offered open-loop at BENCH_CAPACITY_RATE events/s (300) for
//     BENCH_CAPACITY_SECONDS (20) to the Procfile's web and worker processes, 10-frame stacks of
//     BENCH_CAPACITY_STACKS (200) distinct groups; per event: web, worker and Postgres CPU ms, WAL
//     bytes, and the bytes the stored event adds to the error tables; beside them the cores the same
//     processes use idle (BENCH_CAPACITY_IDLE_SECONDS, 5), the model's fixed cost. Run once with 1 web + 1
//     worker, then the same load with 2 webs (WEB_CONCURRENCY=2) + 2 workers: the model says the
//     cores a load needs are rate × CPU per event whatever the number of processes, and both
//     shapes keep up; the check says how close the second came to what the first predicts.
//   users: bytes per end user (a row with an argon2id hash, 2 sessions, 10 sign-ins), seeded in
//     SQL (BENCH_CAPACITY_USERS, 20000); sign-in's own cost is bench/identity.ts's (argon2id-bound).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { hashPassword } from '../src/domain/identity/passwords.ts';
import { operationsQueries } from '../src/domain/operations/queries.ts';
import { keyringFromConfig } from '../src/crypto.ts';
import { createDb } from '../src/db.ts';
import { createEnvWithKeys } from '../src/domain/tenancy/envs.ts';
import { runMigrations } from '../src/migrate.ts';
import { cpuOf, cpuOfTree, postgresCpu, postgresCpuSince } from './cpu.ts';
import {
  freePort,
  jsonPoster,
  ms,
  report,
  scratchDatabase,
  startProcfile,
  stopProcess,
  stopStarted,
  until,
} from './support.ts';

const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const rate = num('BENCH_CAPACITY_RATE', 300);
const seconds = num('BENCH_CAPACITY_SECONDS', 20);
const stacks = num('BENCH_CAPACITY_STACKS', 200);
const users = num('BENCH_CAPACITY_USERS', 20_000);
const idleSeconds = num('BENCH_CAPACITY_IDLE_SECONDS', 5);

const scratch = await scratchDatabase();
const config = scratch.config;
const db = createDb(config);
const dbName = new URL(config.DATABASE_URL).pathname.slice(1);

const start = (role: 'web' | 'worker', env: Record<string, string>) =>
  startProcfile(role, { ...env, DATABASE_URL: config.DATABASE_URL, CAIRN_ENCRYPTION_KEY: config.CAIRN_ENCRYPTION_KEY });

/** Event i: one of `stacks` 10-frame stacks (groups repeat, as bugs do), its own message. */
const body = (i: number): string => {
  const s = i % stacks;
  const frames = Array.from({ length: 10 }, (_, k) => `    at f${s}_${k} (/srv/app/src/m${k}.js:${10 + s}:${k + 1})`);
  return JSON.stringify({
    error_event: {
      event_time: new Date(Date.UTC(2026, 10, 28, 12, 0, 0, i)).toISOString(),
      exception_type: 'TypeError',
      message: `cannot read properties of undefined (reading 'id') in order ${i}`,
      stack: [`TypeError: cannot read properties of undefined`, ...frames].join('\n'),
      release: 'shop@1.4.2',
      service_name: 'api',
      tags: { route: `/orders/${s % 20}`, browser: `Chrome ${120 + (i % 5)}` },
      breadcrumbs: [{ message: 'GET /orders', category: 'http' }],
    },
  });
};

const walLsn = async (): Promise<string> =>
  (await db.raw<{ rows: { l: string }[] }>('select pg_current_wal_lsn()::text as l')).rows[0]!.l;
const walSince = async (lsn: string): Promise<number> =>
  Number(
    (await db.raw<{ rows: { b: string }[] }>('select pg_wal_lsn_diff(pg_current_wal_lsn(), ?) as b', [lsn])).rows[0]!.b,
  );
/** Bytes of the error tables (events, groups and their counts, facets), the intake and queues left out. */
const errorBytes = async (): Promise<number> =>
  Number(
    (
      await db.raw<{ rows: { b: string }[] }>(
        `select coalesce(sum(pg_total_relation_size(c.oid)), 0) as b from pg_class c join pg_namespace n on n.oid = c.relnamespace
          where n.nspname = 'public' and c.relkind = 'r' and c.relname like 'error\\_%' and c.relname not like 'error\\_intake%'`,
      )
    ).rows[0]!.b,
  );

/** Offers `rate` captures a second for `seconds`, open-loop; answers when all were answered. */
async function offer(post: (path: string, body: string) => Promise<number>, from: number) {
  const total = rate * seconds;
  const answers: Promise<void>[] = [];
  let refused = 0;
  const t0 = performance.now();
  for (let sent = 0; sent < total;) {
    const due = Math.min(total, Math.floor((ms(t0) / 1000) * rate));
    for (; sent < due; sent++)
      answers.push(post(':capture', body(from + sent)).then((s) => void (s === 202 || refused++)));
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(answers);
  return { total, refused, offeredSeconds: ms(t0) / 1000 };
}

/** One shape (`webs` web processes, `workers` worker processes) under the offered load. */
async function shape(env: Awaited<ReturnType<typeof createEnvWithKeys>>, webs: number, workers: number, from: number) {
  const port = await freePort();
  const web = start('web', { PORT: String(port), WEB_CONCURRENCY: String(webs), LOG_LEVEL: 'warn' });
  const ws = Array.from({ length: workers }, () => start('worker', { LOG_LEVEL: 'info' }));
  for (const w of ws) await until('a worker', () => readFileSync(w.log, 'utf8').includes('worker started'), 60_000, 50);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const post = jsonPoster(agent, port, env.secretKey, `/v1/${env.env.name}/error_groups`);
  await until(
    'the web',
    () =>
      post(':capture', '{}').then(
        (s) => s === 400,
        () => false,
      ),
    60_000,
    50,
  );
  await db.raw('vacuum analyze');
  // What the processes and Postgres spend with nothing offered (pg-boss polling, schedules,
  // liveness): the model's fixed cost per process, kept apart from the cost per event.
  const idle0 = {
    pg: await postgresCpu(db, dbName),
    procs: cpuOfTree(web.child.pid!) + ws.reduce((a, w) => a + cpuOf(w.child.pid!), 0),
  };
  const tIdle = performance.now();
  await new Promise((r) => setTimeout(r, idleSeconds * 1000));
  const idleCpu =
    cpuOfTree(web.child.pid!) +
    ws.reduce((a, w) => a + cpuOf(w.child.pid!), 0) -
    idle0.procs +
    (await postgresCpuSince(db, dbName, idle0.pg));
  const idleCores = idleCpu / (ms(tIdle) / 1000);
  const [pg0, lsn, bytes0] = [await postgresCpu(db, dbName), await walLsn(), await errorBytes()];
  const [web0, workers0] = [cpuOfTree(web.child.pid!), ws.map((w) => cpuOf(w.child.pid!))];
  const t0 = performance.now();
  let maxPending = 0;
  const sampling = setInterval(() => {
    void operationsQueries(db)
      .intake()
      .then((i) => (maxPending = Math.max(maxPending, i.pending)));
  }, 500);
  const offered = await offer(post, from);
  const lag0 = performance.now();
  await until('every event stored', async () => (await operationsQueries(db).intake()).pending === 0, 600_000, 50);
  clearInterval(sampling);
  const lagSeconds = ms(lag0) / 1000;
  const wall = ms(t0) / 1000;
  const n = offered.total - offered.refused;
  const webCpu = cpuOfTree(web.child.pid!) - web0;
  const workerCpu = ws.reduce((a, w, k) => a + cpuOf(w.child.pid!) - workers0[k]!, 0);
  const pgCpu = await postgresCpuSince(db, dbName, pg0);
  // Per event: what the run cost beyond the same processes idle for as long.
  const idleShare = (idleCores * wall) / (webCpu + workerCpu + pgCpu);
  const perEvent = (cpu: number) => (cpu * (1 - idleShare) * 1000) / n;
  const figures = {
    webMs: perEvent(webCpu),
    workerMs: perEvent(workerCpu),
    postgresMs: perEvent(pgCpu),
    idleCores,
    walBytes: (await walSince(lsn)) / n,
    storedBytes: ((await errorBytes()) - bytes0) / n,
    cores: (webCpu + workerCpu + pgCpu) / wall,
    wall,
    lagSeconds,
    maxPending,
    refused: offered.refused,
    offeredRate: offered.total / offered.offeredSeconds,
  };
  agent.destroy();
  await stopProcess(web.child);
  for (const w of ws) await stopProcess(w.child);
  return { n, figures };
}

/** Bytes per end user: a row with a real argon2id hash, 2 sessions and 10 sign-ins each. */
async function userBytes(envId: string): Promise<number> {
  const hash = await hashPassword('correct horse battery staple 42');
  const tables = ['end_users', 'end_user_sessions', 'end_user_sign_ins'];
  const size = async () =>
    Number(
      (
        await db.raw<{ rows: { b: string }[] }>(
          'select sum(pg_total_relation_size(t::regclass)) as b from unnest(?::text[]) t',
          [tables],
        )
      ).rows[0]!.b,
    );
  const before = await size();
  await db.raw(
    `insert into end_users (id, env_id, email, email_normalized, password_hash, email_verified_time, last_sign_in_time)
     select 'eu_' || lpad(u::text, 26, '0'), ?, 'person' || u || '@example.com', 'person' || u || '@example.com', ?, now(), now()
       from generate_series(1, ?::int) u`,
    [envId, hash, users],
  );
  await db.raw(
    `insert into end_user_sessions (id, env_id, end_user_id, token_hash, method, ip, user_agent, idle_seconds, idle_expire_time, expire_time)
     select 'ses_' || lpad((u * 2 + k)::text, 26, '0'), ?, 'eu_' || lpad(u::text, 26, '0'), sha256((u * 2 + k)::text::bytea),
            'password', '203.0.113.' || (u % 250), 'Mozilla/5.0 (X11; Linux x86_64) Chrome/124.0 Safari/537.36', 604800,
            now() + interval '7 days', now() + interval '30 days'
       from generate_series(1, ?::int) u, generate_series(0, 1) k`,
    [envId, users],
  );
  await db.raw(
    `insert into end_user_sign_ins (id, env_id, end_user_id, method, outcome, ip, user_agent)
     select 'si_' || lpad((u * 10 + k)::text, 26, '0'), ?, 'eu_' || lpad(u::text, 26, '0'), 'password',
            case when k = 0 then 'failed' else 'succeeded' end, '203.0.113.' || (u % 250), 'Mozilla/5.0 Chrome/124.0'
       from generate_series(1, ?::int) u, generate_series(0, 9) k`,
    [envId, users],
  );
  await db.raw('vacuum analyze end_users, end_user_sessions, end_user_sign_ins');
  return ((await size()) - before) / users;
}

try {
  await runMigrations(config);
  const env = await createEnvWithKeys(db, 'orgs/bench/projects/capacity/envs/prod', 'test', keyringFromConfig(config));
  // Warm the store and the groups (the first events of a group cost more: a new group's rows).
  await shape(env, 1, 1, 0);
  const one = await shape(env, 1, 1, rate * seconds);
  const two = await shape(env, 2, 2, 2 * rate * seconds);
  const a = one.figures;
  const b = two.figures;
  const predicted = b.idleCores + (rate * (a.webMs + a.workerMs + a.postgresMs)) / 1000;
  const row = (f: typeof a) => ({
    'cores used idle (the processes and Postgres)': f.idleCores,
    'web CPU ms per event (beyond idle)': f.webMs,
    'worker CPU ms per event (beyond idle)': f.workerMs,
    'Postgres CPU ms per event (beyond idle)': f.postgresMs,
    'WAL bytes per event': f.walBytes,
    'stored bytes per event (error tables)': f.storedBytes,
    'cores used (all CPU ÷ wall time)': f.cores,
    'offered events/s': f.offeredRate,
    'refused captures (= 0)': f.refused,
    'most events pending': f.maxPending,
    'seconds to drain after the last capture': f.lagSeconds,
  });
  report(`1 web + 1 worker, ${rate} events/s for ${seconds} s`, row(a));
  report(`2 webs + 2 workers, the same load`, row(b));
  report('the model checked', {
    "cores predicted (2 + 2's idle + rate × 1 + 1's CPU per event)": predicted,
    'cores used by 2 + 2': b.cores,
    '  used ÷ predicted': b.cores / predicted,
    'CPU per event, 2 + 2 ÷ 1 + 1': (b.webMs + b.workerMs + b.postgresMs) / (a.webMs + a.workerMs + a.postgresMs),
  });
  const t = performance.now();
  const perUser = await userBytes(env.env.id);
  report(`end users (${users}, seeded in ${(ms(t) / 1000).toFixed(1)} s)`, {
    'bytes per user (row, 2 sessions, 10 sign-ins, indexes)': perUser,
  });
} finally {
  await stopStarted();
  await db.destroy();
  await scratch.drop();
}
