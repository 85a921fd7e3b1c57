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
try {
  await runMigrations(config);
  const env = await createEnvWithKeys(db, 'orgs/p/projects/p/envs/s', 'test');
  await db('envs').where({ id: env.env.id }).update({ database_url_enc: seal(keyringFromConfig(config), src, `env-database:${env.env.id}`) });
  for (let i = 0; i < Number(process.env.N ?? 3); i++) {
    const now = new Date();
    const row = (await backupQueries(db).insertBackup({ id: newId('backup'), env_id: env.env.id, type: 'manual', trigger: 'manual', slot: null, bucket: config.CAIRN_BACKUP_BUCKET, object_key: backupObjectKey(env.env.project_id, env.env.id, now), billable: false, create_time: now, expire_time: new Date(now.getTime() + 86400000) }))!;
    const t = performance.now();
    const out = await runCapture(deps, row);
    process.stderr.write(`total ${(performance.now() - t).toFixed(0)} ${out.state} ${out.error ?? ''}\n---\n`);
    await store.delete(out.bucket, out.object_key);
  }
} finally {
  await store.deleteBucket(config.CAIRN_BACKUP_BUCKET).catch(() => undefined);
  await db.destroy();
  await cairn.drop();
}
