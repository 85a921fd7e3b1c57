// Backup and restore speed (issue #6) against the shell baselines on the same machine, same run:
//   backup:  our pg_dump → gzip -6 → cairn-bk1 → multipart upload   vs  pg_dump | gzip -6 > file
//   restore: verify pass + one-transaction replay                    vs  gunzip | psql --single-transaction
// plus the worker's peak RSS. BENCH_BACKUP_SCALE sets the pgbench scale (10 ≈ 150 MB; 70 ≈ 1 GB).
// Needs the S3 server of the tests (AWS_ENDPOINT_URL_S3 …), like `npm test`.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyringFromConfig, seal } from '../src/crypto.ts';
import { runCapture } from '../src/domain/backups/capture.ts';
import { backupObjectKey } from '../src/domain/backups/deps.ts';
import { findTool } from '../src/domain/backups/pgtools.ts';
import { backupQueries } from '../src/domain/backups/queries.ts';
import { applyBackupObject, verifyBackupObject } from '../src/domain/backups/restore.ts';
import { createDb } from '../src/db.ts';
import { createEnvWithKeys } from '../src/domain/tenancy/envs.ts';
import { newId } from '../src/ids.ts';
import { createLogger } from '../src/log.ts';
import { runMigrations } from '../src/migrate.ts';
import { createObjectStore } from '../src/storage/index.ts';
import { ms, report, scratchDatabase } from './support.ts';

const scale = Number(process.env.BENCH_BACKUP_SCALE ?? 10);
const cairn = await scratchDatabase();
const source = await scratchDatabase();
const targets = [await scratchDatabase(), await scratchDatabase()];
const work = mkdtempSync(join(tmpdir(), 'cairn-bench-'));
const config = { ...cairn.config, CAIRN_BACKUP_BUCKET: `cairn-bench-${Date.now().toString(36)}` };
const db = createDb(config);
const store = createObjectStore(config);
const deps = { config, db, store, log: createLogger({ name: 'bench', level: 'silent' }) };

try {
  await runMigrations(config);
  const pgbench = join(process.env.PG_BIN_DIR ?? '/usr/lib/postgresql/15/bin', 'pgbench');
  process.stdout.write(`generating pgbench scale ${scale}…\n`);
  execFileSync(pgbench, ['-i', '-q', '-s', String(scale), source.config.DATABASE_URL], { stdio: 'ignore' });
  const dbBytes = Number(execFileSync('psql', ['-Atc', 'select pg_database_size(current_database())', source.config.DATABASE_URL]).toString());

  const dump = await findTool('pg_dump');
  const psql = await findTool('psql');
  const gz = join(work, 'baseline.sql.gz');
  const shell = (script: string, ...args: string[]) => {
    const t = performance.now();
    const res = spawnSync('bash', ['-c', `set -euo pipefail; ${script}`, 'bench', ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
    if (res.status !== 0) throw new Error(`baseline failed: ${script}`);
    return ms(t);
  };
  const baselineBackup = shell('"$1" --format=plain --no-owner --no-privileges --dbname="$2" | gzip -6 > "$3"', dump.path, source.config.DATABASE_URL, gz);

  const env = await createEnvWithKeys(db, 'orgs/bench/projects/bench/envs/source', 'test');
  await db('envs').where({ id: env.env.id }).update({ database_url_enc: seal(keyringFromConfig(config), source.config.DATABASE_URL, `env-database:${env.env.id}`) });
  const now = new Date();
  const row = (await backupQueries(db).insertBackup({
    id: newId('backup'), env_id: env.env.id, type: 'manual', trigger: 'manual', slot: null, bucket: config.CAIRN_BACKUP_BUCKET,
    object_key: backupObjectKey(env.env.project_id, env.env.id, now), billable: false, create_time: now, expire_time: new Date(now.getTime() + 86_400_000),
  }))!;
  const rssBefore = process.memoryUsage().rss / 2 ** 20;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => { rssPeak = Math.max(rssPeak, process.memoryUsage().rss / 2 ** 20); }, 20);
  const t0 = performance.now();
  const done = await runCapture(deps, row);
  const oursBackup = ms(t0);
  if (done.state !== 'succeeded') throw new Error(`backup failed: ${done.error}`);

  const baselineRestore = shell('gunzip -c "$1" | "$2" -X -q --single-transaction -v ON_ERROR_STOP=1 --dbname="$3"', gz, psql.path, targets[0]!.config.DATABASE_URL);
  const t1 = performance.now();
  await verifyBackupObject(deps, done);
  await applyBackupObject(deps, done, targets[1]!.config.DATABASE_URL);
  const oursRestore = ms(t1);
  clearInterval(sampler);

  report(`backups, pgbench scale ${scale} (database ${(dbBytes / 2 ** 20).toFixed(0)} MiB, gzip ${(statSync(gz).size / 2 ** 20).toFixed(1)} MiB)`, {
    'baseline pg_dump | gzip -6 (ms)': baselineBackup,
    'cairn backup to S3 (ms)': oursBackup,
    'backup throughput ratio (target ≥ 0.90)': baselineBackup / oursBackup,
    'baseline gunzip | psql --single-transaction (ms)': baselineRestore,
    'cairn restore: verify + replay (ms)': oursRestore,
    'restore throughput ratio (target ≥ 0.85)': baselineRestore / oursRestore,
    'RSS before the backup (MB; node, knex, AWS SDK)': rssBefore,
    'peak RSS during backup and restore (MB, target ≤ 200)': rssPeak,
  });
} finally {
  await store.deleteBucket(config.CAIRN_BACKUP_BUCKET).catch(() => undefined);
  await db.destroy();
  rmSync(work, { recursive: true, force: true });
  for (const d of [cairn, source, ...targets]) await d.drop();
}
