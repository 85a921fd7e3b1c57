// Backup and restore speed against the shell baselines on the same machine, same run,
// in interleaved rounds (baseline, ours, baseline, ours…) so that outside load hits both alike:
//   backup:  ours = pg_dump | gzip -6 → cairn-bk1 → multipart upload   vs  pg_dump | gzip -6 > file
//   restore: ours = download+verify → replay in one transaction        vs  gunzip | psql --single-transaction
// then the real worker process (`workers/main.ts`) backs up and restores once, and its own peak
// RSS (VmHWM in /proc/<pid>/status) is read: overall, and for the backup and the restore alone.
//
// Size and rounds (environment):
//   BENCH_BACKUP_SCALE=10        pgbench scale of the generated source (10 ≈ 150 MB, 70 ≈ 1 GB)
//   BENCH_BACKUP_DATA=pgbench    or `mixed`: text, numbers, timestamps and jsonb that compress
//                                about 4:1 like application data (pgbench's blank-padded rows
//                                compress 35:1); the same scale gives about the same database size
//   BENCH_BACKUP_ROUNDS=3        paired rounds of each
//   BENCH_BACKUP_SOURCE_URL=…    back up this existing database instead (not modified or dropped)
//   BENCH_BACKUP_WORKER=0        skip the worker-process RSS phase
// Needs the S3 server of the tests (AWS_ENDPOINT_URL_S3 …), like `npm test`.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { keyringFromConfig, seal } from '../src/crypto.ts';
import { runCapture } from '../src/domain/backups/capture/capture.ts';
import { backupObjectKey } from '../src/domain/backups/deps.ts';
import { findTool } from '../src/domain/backups/pgtools.ts';
import { backupQueries, type BackupRow } from '../src/domain/backups/queries.ts';
import { restoreObject } from '../src/domain/backups/restore/apply.ts';
import { requestManualBackup } from '../src/domain/backups/capture/request.ts';
import { requestRestore } from '../src/domain/backups/restore/request.ts';
import { createEnvWithKeys } from '../src/domain/tenancy/envs.ts';
import { createDb } from '../src/db.ts';
import { createBoss, Jobs } from '../src/jobs/index.ts';
import { queues } from '../src/queues.ts';
import { newId } from '../src/ids.ts';
import { createLogger } from '../src/log.ts';
import { runMigrations } from '../src/migrate.ts';
import { createObjectStore } from '../src/storage/index.ts';
import { adminUrl, ms, procfileArgs, procStatusBytes, quantile, report, scratchDatabase } from './support.ts';

const scale = Number(process.env.BENCH_BACKUP_SCALE ?? 10);
const data = process.env.BENCH_BACKUP_DATA ?? 'pgbench';
const rounds = Math.max(1, Number(process.env.BENCH_BACKUP_ROUNDS ?? 3));
const givenSource = process.env.BENCH_BACKUP_SOURCE_URL;
const pgBin = process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin';
const mib = (n: number) => (n / 2 ** 20).toFixed(1);

// About 15 MB of database per scale unit, as pgbench's; compresses about 4:1 with gzip -6.
const mixedSql = (units: number) => `
create table customers (id int primary key, email text not null, name text, country char(2), created timestamptz, profile jsonb);
create table orders (id bigint primary key, customer_id int not null, created timestamptz not null, status text not null,
  total numeric(12,2), items jsonb, note text);
create index orders_customer on orders (customer_id);
insert into customers
  select g, 'user' || g || '@example.' || (array['com','org','net','io'])[1 + g % 4],
         initcap(substr(md5(g::text), 1, 6)) || ' ' || initcap(substr(md5((g * 7)::text), 1, 9)),
         (array['US','DE','FR','GB','JP','BR','IN','NL'])[1 + g % 8], now() - (g % 1000) * interval '1 hour',
         jsonb_build_object('plan', (array['free','pro','team'])[1 + g % 3], 'score', (random() * 1000)::int, 'ref', substr(md5(random()::text), 1, 12))
  from generate_series(1, ${units * 10_000}) g;
insert into orders
  select g, (1 + (g::bigint * 7919) % ${units * 10_000})::int, now() - (random() * 365) * interval '1 day',
         (array['paid','pending','shipped','refunded'])[1 + (random() * 3)::int], round((random() * 500)::numeric, 2),
         jsonb_build_array(jsonb_build_object('sku', 'SKU-' || (random() * 5000)::int, 'qty', 1 + (random() * 4)::int),
                           jsonb_build_object('sku', 'SKU-' || (random() * 5000)::int, 'qty', 1 + (random() * 4)::int)),
         case when g % 3 = 0 then 'gift wrap; leave at door ' || substr(md5(random()::text), 1, 10) end
  from generate_series(1, ${units * 60_000}) g;
analyze;`;

const cairn = await scratchDatabase();
const created = givenSource ? undefined : await scratchDatabase();
const sourceUrl = givenSource ?? created!.config.DATABASE_URL;
const work = mkdtempSync(join(tmpdir(), 'cairn-bench-'));
const config = { ...cairn.config, CAIRN_BACKUP_BUCKET: `cairn-bench-${Date.now().toString(36)}` };
const db = createDb(config);
const store = createObjectStore(config);
// No webhook endpoints here: a backup's end queues nothing, so this boss is never started.
const deps = {
  config,
  db,
  store,
  log: createLogger({ name: 'bench', level: 'silent' }),
  jobs: new Jobs(createBoss(config, 'web'), queues),
};
const scratch: { drop(): Promise<void> }[] = [];

async function sql(url: string, text: string): Promise<pg.QueryResultRow[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

function shell(script: string, ...args: string[]): number {
  const t = performance.now();
  const res = spawnSync('bash', ['-c', `set -euo pipefail; ${script}`, 'bench', ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (res.status !== 0) throw new Error(`baseline failed: ${script}`);
  return ms(t);
}

async function emptyDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const d = await scratchDatabase();
  scratch.push(d);
  return { url: d.config.DATABASE_URL, drop: () => d.drop() };
}

async function rowCounts(url: string): Promise<Record<string, string>> {
  const tables = await sql(
    url,
    "select format('%I.%I', schemaname, tablename) as t from pg_tables where schemaname not in ('pg_catalog', 'information_schema') order by 1",
  );
  const out: Record<string, string> = {};
  for (const { t } of tables)
    out[t as string] = String((await sql(url, `select count(*) as n from ${t as string}`))[0]!.n);
  return out;
}

/** The worker's child processes (pg_dump, the zlib child, psql) by command name. */
function childrenOf(pid: number): { pid: number; comm: string }[] {
  const out: { pid: number; comm: string }[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const m = /^\d+ \((.*)\) \S (\d+)/.exec(readFileSync(`/proc/${d}/stat`, 'utf8'));
      // Node names its main thread, so the zlib child shows as `node`, then `MainThread`.
      if (m && Number(m[2]) === pid)
        out.push({ pid: Number(d), comm: m[1] === 'MainThread' || m[1] === 'node' ? 'zlib child' : m[1]! });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Private and shared resident MB of a process (proc(5), smaps_rollup). */
function residency(pid: number): { private: number; shared: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (f: string) => Number(new RegExp(`^${f}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return {
    private: (kb('Private_Clean') + kb('Private_Dirty')) / 1024,
    shared: (kb('Shared_Clean') + kb('Shared_Dirty')) / 1024,
  };
}

/**
 * Samples the peak VmHWM of each kind of child of `pid` until stopped, and the peak of the worker
 * and its zlib child together: both run the same node binary, so adding their RSS would count the
 * binary's pages twice; this adds their private pages and the larger of their shared sets (an
 * upper bound of the pages the two hold when they share what they have in common).
 */
function watchChildren(pid: number): () => Record<string, number> {
  const peak: Record<string, number> = {};
  const timer = setInterval(() => {
    let priv = 0;
    let shared = 0;
    try {
      ({ private: priv, shared } = residency(pid));
    } catch {
      // the worker is gone: the run fails elsewhere
    }
    for (const c of childrenOf(pid)) {
      try {
        // A zombie has no VmHWM line: NaN, skipped.
        const hwm = status(c.pid, 'VmHWM');
        if (hwm > 0) peak[c.comm] = Math.max(peak[c.comm] ?? 0, hwm);
        if (c.comm === 'zlib child') {
          const r = residency(c.pid);
          priv += r.private;
          shared = Math.max(shared, r.shared);
        }
      } catch {
        // exited between the listing and the read
      }
    }
    if (priv > 0)
      peak['worker + zlib child (shared pages once)'] = Math.max(
        peak['worker + zlib child (shared pages once)'] ?? 0,
        priv + shared,
      );
  }, 25);
  return () => {
    clearInterval(timer);
    return peak;
  };
}

const status = (pid: number, field: string): number => procStatusBytes(pid, field) / 2 ** 20;

function summary(label: string, base: number[], ours: number[], target: number): Record<string, string> {
  const ratios = base.map((b, i) => b / ours[i]!).sort((x, y) => x - y);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    [`${label}: baseline ms, per round`]: base.map((x) => x.toFixed(0)).join(' '),
    [`${label}: cairn ms, per round`]: ours.map((x) => x.toFixed(0)).join(' '),
    [`${label}: ratio per round (target ≥ ${target})`]: base.map((b, i) => (b / ours[i]!).toFixed(2)).join(' '),
    [`${label}: ratio median / min / of totals`]: `${quantile(ratios, 0.5).toFixed(2)} / ${ratios[0]!.toFixed(2)} / ${(sum(base) / sum(ours)).toFixed(2)}`,
  };
}

try {
  await runMigrations(config);
  if (!givenSource) {
    process.stdout.write(`generating ${data} scale ${scale}…\n`);
    if (data === 'mixed') await sql(sourceUrl, mixedSql(scale));
    else execFileSync(join(pgBin, 'pgbench'), ['-i', '-q', '-s', String(scale), sourceUrl], { stdio: 'ignore' });
  }
  const dbBytes = Number((await sql(sourceUrl, 'select pg_database_size(current_database()) as n'))[0]!.n);
  const dump = await findTool('pg_dump');
  const psql = await findTool('psql');
  const gz = join(work, 'baseline.sql.gz');
  const baselineBackup = () =>
    shell('"$1" --format=plain --no-owner --no-privileges --dbname="$2" | gzip -6 > "$3"', dump.path, sourceUrl, gz);

  const source = await createEnvWithKeys(
    db,
    'orgs/bench/projects/bench/envs/source',
    'test',
    keyringFromConfig(config),
  );
  const target = await createEnvWithKeys(
    db,
    'orgs/bench/projects/bench/envs/target',
    'test',
    keyringFromConfig(config),
  );
  const setDatabase = (envId: string, url: string) =>
    db('envs')
      .where({ id: envId })
      .update({ database_url_enc: seal(keyringFromConfig(config), url, `env-database:${envId}`) });
  await setDatabase(source.env.id, sourceUrl);
  const newRow = async (): Promise<BackupRow> => {
    const now = new Date();
    return (await backupQueries(db).insertBackup({
      id: newId('backup'),
      env_id: source.env.id,
      type: 'manual',
      trigger: 'manual',
      slot: null,
      bucket: config.CAIRN_BACKUP_BUCKET,
      object_key: backupObjectKey(source.env.project_id, source.env.id, now),
      billable: false,
      create_time: now,
      expire_time: new Date(now.getTime() + 86_400_000),
    }))!;
  };

  process.stdout.write('warm-up dump…\n');
  baselineBackup();
  const base: number[] = [];
  const ours: number[] = [];
  let done: BackupRow | undefined;
  for (let r = 0; r < rounds; r++) {
    base.push(baselineBackup());
    const row = await newRow();
    const t = performance.now();
    const out = await runCapture(deps, row);
    ours.push(ms(t));
    if (out.state !== 'succeeded') throw new Error(`backup failed: ${out.error}`);
    // radosgw's memstore keeps objects in RAM: keep only the newest.
    if (done) await store.delete(done.bucket, done.object_key);
    done = out;
    process.stdout.write(
      `  backup round ${r + 1}: baseline ${base[r]!.toFixed(0)} ms, cairn ${ours[r]!.toFixed(0)} ms\n`,
    );
  }
  const sqlBytes = Number(execFileSync('bash', ['-c', 'gzip -dc "$1" | wc -c', 'bench', gz]).toString());

  const baseR: number[] = [];
  const oursR: number[] = [];
  // Each run restores into a new empty database, dropped right after (its row counts checked
  // against the source in round 1): a restored database left behind gets autovacuumed and
  // checkpointed during the next run and slowed whichever ran second by up to 40%. A CHECKPOINT
  // before each timed run, and the order alternating by round, do the rest.
  const sourceCounts = JSON.stringify(await rowCounts(sourceUrl));
  const restoreRun = async (restore: (url: string) => Promise<void>, check: boolean): Promise<number> => {
    const target = await emptyDatabase();
    await sql(adminUrl, 'checkpoint');
    const t = performance.now();
    await restore(target.url);
    const took = ms(t);
    if (check && JSON.stringify(await rowCounts(target.url)) !== sourceCounts)
      throw new Error("the restored row counts differ from the source's");
    await target.drop();
    return took;
  };
  const runBaseline = async (check: boolean) => {
    baseR.push(
      await restoreRun(
        async (url) =>
          void shell(
            'gzip -dc "$1" | "$2" -X -q --single-transaction -v ON_ERROR_STOP=1 --dbname="$3"',
            gz,
            psql.path,
            url,
          ),
        check,
      ),
    );
  };
  const runOurs = async (check: boolean) => {
    oursR.push(await restoreRun(async (url) => void (await restoreObject(deps, done!, url)), check));
  };
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      await runBaseline(r === 0);
      await runOurs(r === 0);
    } else {
      await runOurs(false);
      await runBaseline(false);
    }
    process.stdout.write(
      `  restore round ${r + 1}: baseline ${baseR[r]!.toFixed(0)} ms, cairn ${oursR[r]!.toFixed(0)} ms\n`,
    );
  }

  const rows: Record<string, string> = {
    'database / SQL dump / gzip / object': `${mib(dbBytes)} / ${mib(sqlBytes)} / ${mib(statSync(gz).size)} / ${mib(Number(done!.size_bytes))} MiB`,
    ...summary('backup', base, ours, 0.9),
    ...summary('restore', baseR, oursR, 0.85),
  };

  if (process.env.BENCH_BACKUP_WORKER !== '0') {
    // The real worker process: its own VmHWM, overall and per job (reset through clear_refs).
    const restoreTarget = await emptyDatabase();
    await setDatabase(target.env.id, restoreTarget.url);
    const boss = createBoss(config, 'web');
    await boss.start();
    // The worker as the Procfile starts it (its node flags included).
    const procfile = procfileArgs('worker');
    const child = spawn(process.execPath, procfile, {
      env: {
        ...process.env,
        DATABASE_URL: config.DATABASE_URL,
        CAIRN_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'),
        CAIRN_BACKUP_BUCKET: config.CAIRN_BACKUP_BUCKET,
        LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      let log = '';
      child.stdout.on('data', (d: Buffer) => {
        log += d.toString();
      });
      const deadline = Date.now() + 60_000;
      while (!log.includes('worker started')) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`the worker did not start:\n${log}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const pid = child.pid!;
      const idle = status(pid, 'VmRSS');
      const startHwm = status(pid, 'VmHWM');
      const waitFor = async <T>(probe: () => Promise<T | undefined>): Promise<T> => {
        for (;;) {
          const v = await probe();
          if (v !== undefined) return v;
          if (child.exitCode !== null) throw new Error('the worker exited');
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      const jobs = new Jobs(boss, queues);
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      const backupChildren = watchChildren(pid);
      const bk = await requestManualBackup({ config, db, jobs }, source.env.id);
      const bkDone = await waitFor(async () => {
        const b = await backupQueries(db).backup(bk.id);
        return b?.state === 'succeeded' || b?.state === 'failed' ? b : undefined;
      });
      if (bkDone.state !== 'succeeded') throw new Error(`worker backup failed: ${bkDone.error}`);
      const backupHwm = status(pid, 'VmHWM');
      const backupKids = backupChildren();
      writeFileSync(`/proc/${pid}/clear_refs`, '5');
      const restoreChildren = watchChildren(pid);
      const { op } = await requestRestore({ config, db, jobs }, source.env.id, bk.id, target.env.name);
      const opDone = await waitFor(async () => {
        const o = await backupQueries(db).operation(op.id);
        return o?.state === 'succeeded' || o?.state === 'failed' ? o : undefined;
      });
      if (opDone.state !== 'succeeded') throw new Error(`worker restore failed: ${JSON.stringify(opDone.error)}`);
      const restoreHwm = status(pid, 'VmHWM');
      const restoreKids = restoreChildren();
      const kids = (k: Record<string, number>) =>
        Object.entries(k)
          .map(([c, mb]) => `${c} ${mb.toFixed(0)}`)
          .join(', ');
      Object.assign(rows, {
        'worker command (Procfile)': `node ${procfile.join(' ')}`,
        'worker RSS idle, after start (MB)': idle.toFixed(0),
        'worker VmHWM: start / backup / restore (MB)': `${startHwm.toFixed(0)} / ${backupHwm.toFixed(0)} / ${restoreHwm.toFixed(0)}`,
        'worker peak RSS, all phases (MB, target ≤ 200)': Math.max(startHwm, backupHwm, restoreHwm).toFixed(0),
        'children VmHWM during the backup (MB)': kids(backupKids),
        'children VmHWM during the restore (MB)': kids(restoreKids),
        'worker backup duration_ms': String(bkDone.duration_ms),
      });
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
      await boss.stop({ graceful: false, close: true });
    }
  }
  report(`backups, ${givenSource ? 'given database' : `${data} scale ${scale}`}, ${rounds} rounds`, rows);
} finally {
  await store.deleteBucket(config.CAIRN_BACKUP_BUCKET).catch(() => undefined);
  await db.destroy();
  rmSync(work, { recursive: true, force: true });
  for (const d of [cairn, ...(created ? [created] : []), ...scratch]) await d.drop();
}
