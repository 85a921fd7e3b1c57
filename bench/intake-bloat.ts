// The error intake's table under steady load: how large the queue's partition (heap, TOAST and
// indexes) grows while events flow through it. Each event's job is inserted by a capture and
// deleted when a worker stores it, so every event leaves dead tuples behind; only VACUUM makes
// their space reusable. Three ways, each from an empty table:
//   no vacuum:   autovacuum off and the `errors.vacuum` job unscheduled (the baseline);
//   the job:     autovacuum off, the every-minute `errors.vacuum` job (intake/vacuum.ts);
//   autovacuum:  autovacuum on at its defaults (ALTER SYSTEM for the run: this machine's server
//                has it off; put back after), the job unscheduled.
// One worker process (as the Procfile starts it) processes what this process feeds at a steady rate.
// Env: DATABASE_URL and the S3 variables of the tests; BENCH_BLOAT_SECONDS (150 per way: both
// autovacuum and the job wake once a minute), BENCH_BLOAT_RATE (events/s, 1000).
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { keyringFromConfig } from '../src/crypto.ts';
import { createDb } from '../src/db.ts';
import { newEventUid } from '../src/domain/errors/intake/capture.ts';
import { errorEventInput } from '../src/contract/error-capture.ts';
import { sealPayload } from '../src/domain/errors/intake/sealed-payload.ts';
import { enqueueEvents } from '../src/domain/errors/intake/writer.ts';
import { operationsQueries } from '../src/domain/operations/queries.ts';
import { createEnvWithKeys } from '../src/domain/tenancy/envs.ts';
import { createBoss, Jobs } from '../src/jobs/index.ts';
import { queues } from '../src/queues.ts';
import { runMigrations } from '../src/migrate.ts';
import { procfileArgs, report, repoRoot, scratchDatabase } from './support.ts';

const seconds = Number(process.env.BENCH_BLOAT_SECONDS ?? 150);
const rate = Number(process.env.BENCH_BLOAT_RATE ?? 1000);
const tick = 100;

const scratch = await scratchDatabase();
const config = scratch.config;
const db = createDb(config, { poolMax: 4 });
const keyring = keyringFromConfig(config);
let worker: ChildProcess | undefined;
let boss: ReturnType<typeof createBoss> | undefined;

const event = (i: number) =>
  errorEventInput.parse({
    event_time: new Date(Date.UTC(2026, 10, 21, 12, 0, 0, i % 1000)).toISOString(),
    exception_type: 'TypeError',
    message: `Cannot read properties of undefined (reading 'id') for order ${i}`,
    stack: [
      'TypeError: Cannot read properties of undefined',
      ...Array.from(
        { length: 20 },
        (_, k) => `    at handler${(i + k) % 97} (/srv/app/src/orders.js:${10 + k}:${5 + k})`,
      ),
    ].join('\n'),
    service_name: 'shop',
    tags: { route: `/orders/${i % 20}` },
    breadcrumbs: [{ message: `GET /orders/${i}`, category: 'http' }],
  });

try {
  await runMigrations(config);
  boss = createBoss(config, 'web');
  await boss.start();
  const jobs = new Jobs(boss, queues);
  const env = await createEnvWithKeys(db, 'orgs/bench/projects/bloat/envs/prod', 'test', keyring);
  const { rows } = await db.raw<{ rows: { table_name: string }[] }>(
    "select table_name from pgboss.queue where name = 'errors.ingest'",
  );
  const table = `pgboss.${rows[0]!.table_name}`;
  worker = spawn(process.execPath, procfileArgs('worker'), {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: config.DATABASE_URL, CAIRN_ENCRYPTION_KEY: config.CAIRN_ENCRYPTION_KEY },
    stdio: ['ignore', openSync(`${tmpdir()}/cairn-bench-bloat-worker.log`, 'w'), 'inherit'],
  });

  // The worker schedules its cron jobs as it starts: the ways below change that schedule after.
  const log = `${tmpdir()}/cairn-bench-bloat-worker.log`;
  for (let i = 0; !readFileSync(log, 'utf8').includes('worker started'); i++) {
    if (worker.exitCode !== null || i > 600) throw new Error(`the worker did not start; see ${log}`);
    await sleep(100);
  }

  const size = async () => {
    const { rows } = await db.raw<{ rows: { bytes: string; dead: string | null; vacuums: string | null }[] }>(
      `select pg_total_relation_size(?::regclass) as bytes,
              (select n_dead_tup from pg_stat_user_tables where relid = ?::regclass) as dead,
              (select autovacuum_count + vacuum_count from pg_stat_user_tables where relid = ?::regclass) as vacuums`,
      [table, table, table],
    );
    return {
      mb: Number(rows[0]!.bytes) / 1e6,
      dead: Number(rows[0]!.dead ?? 0),
      vacuums: Number(rows[0]!.vacuums ?? 0),
    };
  };

  let seq = 0;
  const figures: Record<string, number> = {};
  const peaks: Record<string, number> = {};
  const { rows: av } = await db.raw<{ rows: { setting: string }[] }>(
    "select setting from pg_settings where name = 'autovacuum'",
  );
  const autovacuumWas = av[0]!.setting;
  const ways = [
    { label: 'no vacuum', autovacuum: false, job: false },
    { label: 'the errors.vacuum job', autovacuum: false, job: true },
    { label: 'autovacuum at its defaults', autovacuum: true, job: false },
  ];
  try {
    for (const way of ways) {
      await db.raw(`vacuum full ${table}`);
      await db.raw(`alter system set autovacuum = ${way.autovacuum ? 'on' : 'off'}`);
      await db.raw('select pg_reload_conf()');
      if (way.job) await boss.schedule('errors.vacuum', '* * * * *', {}, { tz: 'UTC', key: 'every-minute' });
      else {
        // The worker scheduled it at start; a run already sent would still vacuum.
        await boss.unschedule('errors.vacuum', 'every-minute');
        await boss.deleteAllJobs('errors.vacuum');
      }
      const start = await size();
      let peak = start.mb;
      const t0 = performance.now();
      for (let n = 0; performance.now() - t0 < seconds * 1000; n++) {
        const due = t0 + n * tick;
        if (due > performance.now()) await sleep(due - performance.now());
        const batch = Array.from({ length: (rate * tick) / 1000 }, () =>
          sealPayload(keyring, env.env.id, newEventUid('c0'), event(seq++)),
        );
        await enqueueEvents(db, jobs, batch);
        if (n % 50 === 0) peak = Math.max(peak, (await size()).mb);
      }
      for (;;) {
        if (worker.exitCode !== null) throw new Error('the worker exited');
        if ((await operationsQueries(db).intake()).pending === 0) break;
        await sleep(200);
      }
      const end = await size();
      peak = Math.max(peak, end.mb);
      peaks[way.label] = peak;
      figures[`${way.label}: partition MB at the end`] = end.mb;
      figures[`${way.label}: partition MB at the peak`] = peak;
      figures[`${way.label}: dead jobs at the end`] = end.dead;
      figures[`${way.label}: vacuums (auto + the job's)`] = end.vacuums - start.vacuums;
    }
  } finally {
    // This server's own setting again (its configuration file's, here `off`).
    await db.raw('alter system reset autovacuum');
    await db.raw('select pg_reload_conf()');
    process.stderr.write(`autovacuum: was ${autovacuumWas}, reset\n`);
  }
  figures['peak: no vacuum / the job'] = peaks['no vacuum']! / peaks['the errors.vacuum job']!;
  figures['peak: no vacuum / autovacuum'] = peaks['no vacuum']! / peaks['autovacuum at its defaults']!;
  report(`the intake's partition, ${rate} events/s for ${seconds} s each way (${seq} events), one worker`, figures);
} finally {
  worker?.kill('SIGTERM');
  if (worker && worker.exitCode === null) await new Promise((r) => worker!.once('exit', r));
  await boss?.stop({ graceful: false, close: true });
  await db.destroy();
  await scratch.drop();
}
