// A restore leaves the target's catalog as pg_dump saw the source's, through the API and a real
// worker: three public sample databases and one with roles, grants and default privileges come
// back with the very same schema (pg_dump --schema-only, byte for byte) and rows, and a drill of
// each finds nothing different. A role that is not the owner reads through its grants before and
// after. A restoring role that is not a superuser, and a grantee the target lacks, leave out what
// cannot be done and the operation says so; a drill names an object a restore cannot reproduce.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createCliContext } from '../../src/cli/admin-context.ts';
import { register } from '../../src/cli/commands/backups.ts';
import { encryptStream } from '../../src/domain/backups/format.ts';
import { findTool } from '../../src/domain/backups/pgtools.ts';
import { replayStream } from '../../src/domain/backups/restore.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { queues } from '../../src/jobs.ts';
import type { WebHandle } from '../../src/server.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import type { ObjectStore } from '../../src/storage/object-store.ts';
import { startWorker, type WorkerHandle } from '../../src/worker.ts';
import { handlers } from '../../workers/handlers.ts';
import { call, createHarness, createTestEnv, startTestWeb, type Harness } from '../support/harness.ts';
import { adminUrl, databaseUrl, withAdmin } from '../support/pg.ts';
import { extrasSql, publicSamples, schemaText } from './samples.ts';
import { createAppDatabase, query, setEnvDatabase, tableChecksums, waitFor, type AppDatabase } from './support.ts';

type Json = Record<string, unknown>;
const run = randomBytes(4).toString('hex');
const reader = `cairn_reader_${run}`;
const writer = `cairn_writer_${run}`;
const owner = `cairn_owner_${run}`;
const driller = `cairn_driller_${run}`;
const ghost = `cairn_ghost_${run}`;
const bucket = `cairn-bk-${randomBytes(5).toString('hex')}`;
const project = `orgs/cat-org/projects/p${run}`;
let h: Harness;
let web: WebHandle;
let worker: WorkerHandle<typeof queues>;
let store: ObjectStore;
const databases: AppDatabase[] = [];
let envs = 0;

async function appDatabase(sql: string): Promise<AppDatabase> {
  const db = await createAppDatabase(sql);
  databases.push(db);
  return db;
}

/** A database owned by `role`, and its URL as that role (trust authentication, as the test server has). */
async function ownedDatabase(role: string, sql: string): Promise<AppDatabase> {
  const db = await appDatabase('');
  await withAdmin((c) => c.query(`alter database ${db.name} owner to ${role}`));
  const url = new URL(db.url);
  url.username = role;
  if (sql) await query(url.toString(), sql);
  return { ...db, url: url.toString() };
}

const as = (role: string, db: AppDatabase): string => {
  const url = new URL(databaseUrl(db.name));
  url.username = role;
  return url.toString();
};

async function envOf(url: string): Promise<CreatedEnv> {
  const env = await createTestEnv(h.db, `${project}/envs/e${(envs += 1)}`, 'test');
  await setEnvDatabase(h.db, h.config, env.env.id, url);
  return env;
}

async function backupOf(env: CreatedEnv): Promise<Json> {
  const created = await call<Json>(web.url, 'POST', `/v1/${env.env.name}/backups`, { key: env.secretKey, body: {} });
  const done = await waitFor(
    'the backup',
    async () => {
      const res = await call<Json>(web.url, 'GET', `/v1/backups/${String(created.body.id)}`, { key: env.secretKey });
      return res.body.state === 'succeeded' || res.body.state === 'failed' ? res.body : undefined;
    },
    60_000,
  );
  expect(done).toMatchObject({ state: 'succeeded' });
  return done;
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

async function restore(backup: Json, from: CreatedEnv, to: CreatedEnv): Promise<Json> {
  const res = await call<Json>(web.url, 'POST', `/v1/backups/${String(backup.id)}/restore`, {
    key: from.secretKey,
    body: { targetEnv: to.env.name },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const op = await operation(String(res.body.name), from.secretKey);
  expect(op.error).toBeUndefined();
  return op;
}

async function drill(env: CreatedEnv): Promise<Json> {
  const res = await call<Json>(web.url, 'POST', `/v1/${env.env.name}/backups:drill`, { key: env.secretKey, body: {} });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return operation(String(res.body.name), env.secretKey);
}

const publicSchema = (url: string) =>
  query(
    url,
    `select pg_get_userbyid(nspowner) as owner, nspacl::text as acl, obj_description(oid, 'pg_namespace') as comment
       from pg_namespace where nspname = 'public'`,
  );

beforeAll(async () => {
  h = await createHarness({ CAIRN_BACKUP_BUCKET: bucket });
  store = createObjectStore(h.config);
  web = await startTestWeb(h);
  worker = await startWorker(h.config, queues, handlers, { pollingIntervalSeconds: 0.5 });
  await withAdmin((c) =>
    c.query(`create role ${reader} login; create role ${writer}; create role ${owner} login nosuperuser nocreatedb;
             create role ${driller} login nosuperuser createdb`),
  );
});

afterAll(async () => {
  await worker?.stop();
  await web?.stop();
  await store?.deleteBucket(bucket).catch(() => undefined);
  for (const db of databases) await db.drop();
  // Roles are the cluster's: dropped once every database naming them is.
  await withAdmin((c) => c.query(`drop role if exists ${reader}, ${writer}, ${owner}, ${driller}, ${ghost}`));
  await h?.close();
});

describe('public sample databases', () => {
  for (const [name, sql] of Object.entries(publicSamples())) {
    it(`${name}: a restore gives the same schema, grants and rows, and a drill finds no difference`, async () => {
      const [source, target] = await Promise.all([appDatabase(sql), appDatabase('create table leftovers (id int);')]);
      const [from, to] = await Promise.all([envOf(source.url), envOf(target.url)]);
      const backup = await backupOf(from);
      const op = await restore(backup, from, to);
      expect(op.response).toMatchObject({ skipped: { statements: 0, roles: [] } });
      expect(await schemaText(target.url)).toBe(await schemaText(source.url));
      const rows = await tableChecksums(source.url);
      expect(Object.keys(rows).length).toBeGreaterThan(5);
      expect(await tableChecksums(target.url)).toEqual(rows);
      expect(await publicSchema(target.url)).toEqual(await publicSchema(source.url));
      expect((await drill(from)).response).toEqual(expect.objectContaining({ verification: { result: 'passed' } }));
    });
  }
});

describe('roles, grants and default privileges', () => {
  let source: AppDatabase;
  let from: CreatedEnv;
  let backup: Json;
  const readsAs = async (url: string) => ({
    notes: (await query(url, 'select id, body from public.notes order by id')).length,
    entries: (await query<{ n: string }>(url, 'select count(*) as n from ledger.entries'))[0]!.n,
    totals: (await query(url, 'select * from ledger.totals')).length,
  });

  beforeAll(async () => {
    const citext = (await query(adminUrl, "select 1 from pg_available_extensions where name = 'citext'")).length > 0;
    source = await appDatabase(extrasSql({ reader, writer, citext }));
    from = await envOf(source.url);
    backup = await backupOf(from);
  });

  it('a role that owns nothing reads through its grants before and after a restore, and the catalog is the same', async () => {
    const target = await appDatabase('create table leftovers (id int);');
    const to = await envOf(target.url);
    const before = await readsAs(as(reader, source));
    expect(before).toEqual({ notes: 40, entries: '400', totals: 3 });
    const op = await restore(backup, from, to);
    expect(await readsAs(as(reader, target))).toEqual(before);
    expect(op.response).toMatchObject({ skipped: { statements: 0, roles: [] } });
    const [facts] = await query(
      target.url,
      `select has_schema_privilege($1, 'public', 'USAGE') as public_usage, has_schema_privilege($1, 'public', 'CREATE') as public_create,
              has_column_privilege($1, 'public.notes', 'secret', 'SELECT') as secret,
              (select pg_get_userbyid(nspowner) from pg_namespace where nspname = 'ledger') as ledger_owner,
              (select count(*) from pg_default_acl where pg_get_userbyid(defaclrole) = $2)::int as default_acls,
              (select extversion from pg_extension where extname = 'citext') as citext`,
      [reader, writer],
    );
    expect(facts).toMatchObject({
      public_usage: true,
      public_create: false,
      secret: false,
      ledger_owner: writer,
      default_acls: 2,
    });
    expect(facts!.citext).toEqual(
      (await query(source.url, "select extversion from pg_extension where extname = 'citext'"))[0]?.extversion ?? null,
    );
    expect(await publicSchema(target.url)).toEqual([
      {
        owner: 'pg_database_owner',
        acl: '{pg_database_owner=UC/pg_database_owner,=U/pg_database_owner}',
        comment: "the shop's own schema",
      },
    ]);
    expect(await schemaText(target.url)).toBe(await schemaText(source.url));
    expect(await tableChecksums(target.url)).toEqual(await tableChecksums(source.url));
    expect((await drill(from)).response).toEqual(expect.objectContaining({ verification: { result: 'passed' } }));
  });

  it('restores into a database whose owner is not a superuser, leaving out the owners it cannot take and saying so', async () => {
    const target = await ownedDatabase(owner, 'create table leftovers (id int);');
    const to = await envOf(target.url);
    const op = await restore(backup, from, to);
    const skipped = (op.response as Json).skipped as { statements: number; roles: string[] };
    expect(skipped.roles).toEqual(['postgres', writer].sort());
    expect(skipped.statements).toBeGreaterThan(10);
    expect(await readsAs(as(reader, target))).toEqual({ notes: 40, entries: '400', totals: 3 });
    const owners = await query<{ o: string }>(
      target.url,
      `select distinct pg_get_userbyid(relowner) as o from pg_class where relnamespace in ('public'::regnamespace, 'ledger'::regnamespace)`,
    );
    expect(owners).toEqual([{ o: owner }]);
    expect(await publicSchema(target.url)).toEqual([
      {
        owner: 'pg_database_owner',
        acl: '{pg_database_owner=UC/pg_database_owner,=U/pg_database_owner}',
        comment: "the shop's own schema",
      },
    ]);
    expect(await tableChecksums(target.url)).toEqual(await tableChecksums(source.url));
  });

  it('still restores a backup dumped without owners and grants, and public is as in a new database', async () => {
    const { stdout } = await promisify(execFile)(
      (await findTool('pg_dump')).path,
      ['--format=plain', '--no-owner', '--no-privileges', `--dbname=${source.url}`],
      { maxBuffer: 64 * 1024 * 1024, encoding: 'buffer' },
    );
    const key = randomBytes(32);
    const target = await appDatabase('create table leftovers (id int);');
    const plain = (async function* () {
      yield gzipSync(stdout);
    })();
    const skipped = await replayStream(encryptStream(plain, key), key, target.url, null);
    expect(skipped).toEqual({ statements: 0, roles: [] });
    expect(await publicSchema(target.url)).toEqual([
      {
        owner: 'pg_database_owner',
        acl: '{pg_database_owner=UC/pg_database_owner,=U/pg_database_owner}',
        comment: "the shop's own schema",
      },
    ]);
    expect(await tableChecksums(target.url)).toEqual(await tableChecksums(source.url));
  });

  it('leaves out a grant to a role the target does not have, and says so', async () => {
    await withAdmin((c) => c.query(`create role ${ghost}`));
    await query(source.url, `grant select on public.notes to ${ghost}`);
    const withGhost = await backupOf(from);
    await query(source.url, `revoke select on public.notes from ${ghost}`);
    await withAdmin((c) => c.query(`drop role ${ghost}`));
    const target = await appDatabase('');
    const to = await envOf(target.url);
    // Through the CLI, which says what was left out.
    const ctx = createCliContext({ CAIRN_API_URL: web.url, CAIRN_SECRET_KEY: from.secretKey });
    const program = new Command('cairn').exitOverride();
    register(program, ctx);
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      await program.parseAsync([
        'node',
        'cairn',
        'backups',
        'restore',
        String(withGhost.id),
        '--env',
        to.env.name,
        '--confirm',
      ]);
      const printed = stdout.mock.calls.map((c) => String(c[0])).join('');
      expect(printed).toContain(`restored ${String(withGhost.id)} into ${to.env.name}`);
      expect(printed).toContain(
        `1 statement(s) left out: they name roles this database's server lacks or its role may not act as (${ghost})`,
      );
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
      await ctx.close();
    }
    const [op] = await h.db('backup_operations').where({ env_id: to.env.id, kind: 'restore' }).select('id');
    const res = await call<Json>(web.url, 'GET', `/v1/operations/${String(op!.id)}`, { key: from.secretKey });
    expect(res.body.response).toMatchObject({ skipped: { statements: 1, roles: [ghost] } });
    expect(await schemaText(target.url)).toBe(await schemaText(source.url));
  });
});

describe('a drill', () => {
  it("names the object whose catalog a restore by the environment's role cannot reproduce", async () => {
    const db = await ownedDatabase(driller, '');
    await query(
      databaseUrl(db.name),
      `create table public.audit (id int primary key); insert into public.audit select generate_series(1, 10);
       grant select on public.audit to ${driller};`,
    );
    const env = await envOf(db.url);
    await backupOf(env);
    const op = await drill(env);
    const verification = (op.response as Json).verification as { result: string; reason: string };
    expect(verification.result).toBe('failed');
    expect(verification.reason).toContain(
      `table public.audit: owner "postgres" at dump time, "${driller}" after the restore`,
    );
  });
});
