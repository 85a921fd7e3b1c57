import { runCapture } from '/work/main/src/domain/backups/capture.ts';
import { backupObjectKey } from '/work/main/src/domain/backups/deps.ts';
import { backupQueries } from '/work/main/src/domain/backups/queries.ts';
import { createEnvWithKeys } from '/work/main/src/domain/tenancy/envs.ts';
import { keyringFromConfig, seal } from '/work/main/src/crypto.ts';
import { createDb } from '/work/main/src/db.ts';
import { newId } from '/work/main/src/ids.ts';
import { createLogger } from '/work/main/src/log.ts';
import { runMigrations } from '/work/main/src/migrate.ts';
import { createObjectStore } from '/work/main/src/storage/index.ts';
import { scratchDatabase } from '/work/main/bench/support.ts';
const src = process.env.SRC!;
const cairn = await scratchDatabase();
const config = { ...cairn.config, CAIRN_BACKUP_BUCKET: `cairn-prof-${Date.now().toString(36)}` };
const db = createDb(config);
const store = createObjectStore(config);
const deps = { config, db, store, log: createLogger({ name: 'p', level: 'silent' }) };
const peak = { rss: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
const sampler = setInterval(() => { const m = process.memoryUsage(); for (const k of Object.keys(peak) as (keyof typeof peak)[]) peak[k] = Math.max(peak[k], m[k] / 2 ** 20); }, 10);
try {
  await runMigrations(config);
  const env = await createEnvWithKeys(db, 'orgs/p/projects/p/envs/s', 'test');
  await db('envs').where({ id: env.env.id }).update({ database_url_enc: seal(keyringFromConfig(config), src, `env-database:${env.env.id}`) });
  for (let i = 0; i < Number(process.env.N ?? 3); i++) {
    const now = new Date();
    const row = (await backupQueries(db).insertBackup({ id: newId('backup'), env_id: env.env.id, type: 'manual', trigger: 'manual', slot: null, bucket: config.CAIRN_BACKUP_BUCKET, object_key: backupObjectKey(env.env.project_id, env.env.id, now), billable: false, create_time: now, expire_time: new Date(now.getTime() + 86400000) }))!;
    for (const k of Object.keys(peak) as (keyof typeof peak)[]) peak[k] = 0;
    const m0 = process.memoryUsage(); process.stderr.write(`before rss ${(m0.rss/2**20).toFixed(0)} heap ${(m0.heapUsed/2**20).toFixed(0)} ext ${(m0.external/2**20).toFixed(0)} ab ${(m0.arrayBuffers/2**20).toFixed(0)}\n`);
    const t = performance.now();
    const out = await runCapture(deps, row);
    process.stderr.write(`total ${(performance.now() - t).toFixed(0)} ${out.state} ${out.error ?? ''}\n---\n`);
    process.stderr.write(`peak ${JSON.stringify(Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, Math.round(v)])))}\n`);
    await store.delete(out.bucket, out.object_key);
  }
  clearInterval(sampler);
} finally {
  await store.deleteBucket(config.CAIRN_BACKUP_BUCKET).catch(() => undefined);
  await db.destroy();
  await cairn.drop();
}
