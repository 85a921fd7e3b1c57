// The world the catalog restore tests share: a harness with its web and a real worker, a bucket,
// app databases (some owned by a role of the test's), environments on them, and the API calls a
// user makes (backup, restore, drill) waited for. Roles are the cluster's: each test file names
// its own, unique per run, and they are dropped once every database naming them is.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect } from 'vitest';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { queues } from '../../src/queues.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { call, createHarness, createTestEnv, startTestWeb, type Harness } from '../support/harness.ts';
import { databaseUrl, withAdmin } from '../support/pg.ts';
import { createAppDatabase, query, setEnvDatabase, waitFor, type AppDatabase } from './support.ts';

export type Json = Record<string, unknown>;

/** A unique role name for this run. */
export const roleName = (what: string): string => `cairn_${what}_${randomBytes(4).toString('hex')}`;

/** `roles`: name → CREATE ROLE options (null: made by the test itself, only dropped here). */
export function useRestoreWorld(roles: Record<string, string | null>) {
  const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;
  const project = `orgs/cat-org/projects/p${randomBytes(3).toString('hex')}`;
  let h: Harness;
  let web: WebHandle;
  let worker: WorkerHandle<typeof queues>;
  let store: ObjectStore;
  const databases: AppDatabase[] = [];
  let envs = 0;

  // Its own pair, not useStack(): the bucket, app databases and roles must go after the worker and
  // web stop and before the database closes, and useStack stops and closes in one afterAll.
  beforeAll(async () => {
    h = await createHarness({ CAIRN_BACKUP_BUCKET: bucket });
    store = createObjectStore(h.config);
    web = await startTestWeb(h);
    worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
    for (const [name, options] of Object.entries(roles))
      if (options !== null) await withAdmin((c) => c.query(`create role ${name} ${options}`));
  });

  afterAll(async () => {
    await worker?.stop();
    await web?.stop();
    await store?.deleteBucket(bucket).catch(() => undefined);
    for (const db of databases) await db.drop();
    await withAdmin((c) => c.query(`drop role if exists ${Object.keys(roles).join(', ')}`));
    await h?.close();
  });

  async function appDatabase(sql: string): Promise<AppDatabase> {
    const db = await createAppDatabase(sql);
    databases.push(db);
    return db;
  }

  async function operation(name: string, key: string): Promise<Json> {
    return waitFor(
      `operation ${name}`,
      async () => {
        const res = await call<Json>(web.url, 'GET', `/v1/${name}`, { key });
        return res.body.done === true ? res.body : undefined;
      },
      60_000,
    );
  }

  return {
    harness: () => h,
    web: () => web,
    appDatabase,

    /** A database owned by `role`, its URL as that role (trust authentication, as the test server has). */
    async ownedDatabase(role: string, sql: string): Promise<AppDatabase> {
      const db = await appDatabase('');
      await withAdmin((c) => c.query(`alter database ${db.name} owner to ${role}`));
      const url = new URL(db.url);
      url.username = role;
      if (sql) await query(url.toString(), sql);
      return { ...db, url: url.toString() };
    },

    /** The database's URL as `role`. */
    as(role: string, db: AppDatabase): string {
      const url = new URL(databaseUrl(db.name));
      url.username = role;
      return url.toString();
    },

    async envOf(url: string): Promise<CreatedEnv> {
      const env = await createTestEnv(h.db, `${project}/envs/e${(envs += 1)}`, 'test');
      await setEnvDatabase(h.db, h.config, env.env.id, url);
      return env;
    },

    async backupOf(env: CreatedEnv): Promise<Json> {
      const created = await call<Json>(web.url, 'POST', `/v1/${env.env.name}/backups`, {
        key: env.secretKey,
        body: {},
      });
      const done = await waitFor(
        'the backup',
        async () => {
          const res = await call<Json>(web.url, 'GET', `/v1/backups/${String(created.body.id)}`, {
            key: env.secretKey,
          });
          return res.body.state === 'succeeded' || res.body.state === 'failed' ? res.body : undefined;
        },
        60_000,
      );
      expect(done).toMatchObject({ state: 'succeeded' });
      return done;
    },

    async restore(backup: Json, from: CreatedEnv, to: CreatedEnv): Promise<Json> {
      const res = await call<Json>(web.url, 'POST', `/v1/backups/${String(backup.id)}/restore`, {
        key: from.secretKey,
        body: { targetEnv: to.env.name },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const op = await operation(String(res.body.name), from.secretKey);
      expect(op.error).toBeUndefined();
      return op;
    },

    async drill(env: CreatedEnv): Promise<Json> {
      const res = await call<Json>(web.url, 'POST', `/v1/${env.env.name}/backups:drill`, {
        key: env.secretKey,
        body: {},
      });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      return operation(String(res.body.name), env.secretKey);
    },
  };
}

/** `public`'s owner, ACL and comment. */
export const publicSchema = (url: string) =>
  query(
    url,
    `select pg_get_userbyid(nspowner) as owner, nspacl::text as acl, obj_description(oid, 'pg_namespace') as comment
       from pg_namespace where nspname = 'public'`,
  );
