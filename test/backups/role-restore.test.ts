// Owners, grants and default privileges survive a restore, through the API and a real worker: a
// role that owns nothing reads through its grants before and after, and the schema is the same
// byte for byte. A restoring role that is not a superuser, and a grantee the target lacks, leave
// out what cannot be done and the operation (and the CLI) says so. A backup dumped without owners
// and grants still restores, its public as in a new database.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { Command } from 'commander';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { createCliContext } from '../../src/cli/admin-context.ts';
import { register } from '../../src/cli/commands/backups/index.ts';
import { encryptStream } from '../../src/domain/backups/format/format.ts';
import { findTool } from '../../src/domain/backups/pgtools.ts';
import { replayStream } from '../../src/domain/backups/restore/apply.ts';
import type { CreatedEnv } from '../../src/domain/tenancy/envs.ts';
import { call } from '../support/harness.ts';
import { adminUrl, withAdmin } from '../support/pg.ts';
import { publicSchema, roleName, useRestoreWorld, type Json } from './restore-world.ts';
import { extrasSql, schemaText } from './samples.ts';
import { query, tableChecksums, type AppDatabase } from './support.ts';

const reader = roleName('reader');
const writer = roleName('writer');
const owner = roleName('owner');
const ghost = roleName('ghost');
const w = useRestoreWorld({
  [reader]: 'login',
  [writer]: '',
  [owner]: 'login nosuperuser nocreatedb',
  [ghost]: null,
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
    source = await w.appDatabase(extrasSql({ reader, writer, citext }));
    from = await w.envOf(source.url);
    backup = await w.backupOf(from);
  });

  it('a role that owns nothing reads through its grants before and after a restore, and the catalog is the same', async () => {
    const target = await w.appDatabase('create table leftovers (id int);');
    const to = await w.envOf(target.url);
    const before = await readsAs(w.as(reader, source));
    expect(before).toEqual({ notes: 40, entries: '400', totals: 3 });
    const op = await w.restore(backup, from, to);
    expect(await readsAs(w.as(reader, target))).toEqual(before);
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
    expect((await w.drill(from)).response).toEqual(expect.objectContaining({ verification: { result: 'passed' } }));
  });

  it('restores into a database whose owner is not a superuser, leaving out the owners it cannot take and saying so', async () => {
    const target = await w.ownedDatabase(owner, 'create table leftovers (id int);');
    const to = await w.envOf(target.url);
    const op = await w.restore(backup, from, to);
    const skipped = (op.response as Json).skipped as { statements: number; roles: string[] };
    expect(skipped.roles).toEqual(['postgres', writer].sort());
    expect(skipped.statements).toBeGreaterThan(10);
    expect(await readsAs(w.as(reader, target))).toEqual({ notes: 40, entries: '400', totals: 3 });
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

  it('gives owners to a role the restoring role is a member of where PostgreSQL lets it, and reports those it refuses', async () => {
    await withAdmin((c) => c.query(`grant ${writer} to ${owner}`));
    try {
      const target = await w.ownedDatabase(owner, '');
      const to = await w.envOf(target.url);
      const ownerOf = async (name: string) =>
        (
          await query<{ o: string }>(
            target.url,
            `select pg_get_userbyid(relowner) as o from pg_class where oid = $1::regclass`,
            [name],
          )
        )[0]!.o;
      // The writer owns ledger once given it, and so may own its tables; in public (PostgreSQL
      // 15+: CREATE for its owner only) it may not, and that refusal is reported, not fatal.
      const op = await w.restore(backup, from, to);
      expect(op.response).toMatchObject({ skipped: { roles: ['postgres', writer].sort() } });
      const [schema] = await query<{ o: string }>(
        target.url,
        "select pg_get_userbyid(nspowner) as o from pg_namespace where nspname = 'ledger'",
      );
      expect(schema!.o).toBe(writer);
      expect(await ownerOf('ledger.entries')).toBe(writer);
      expect(await ownerOf('ledger.totals')).toBe(writer);
      expect(await ownerOf('public.drafts')).toBe(owner);
      expect(await readsAs(w.as(reader, target))).toEqual({ notes: 40, entries: '400', totals: 3 });
      expect(await tableChecksums(target.url)).toEqual(await tableChecksums(source.url));
    } finally {
      await withAdmin((c) => c.query(`revoke ${writer} from ${owner}`));
    }
  });

  it('still restores a backup dumped without owners and grants, and public is as in a new database', async () => {
    const { stdout } = await promisify(execFile)(
      (await findTool('pg_dump')).path,
      ['--format=plain', '--no-owner', '--no-privileges', `--dbname=${source.url}`],
      { maxBuffer: 64 * 1024 * 1024, encoding: 'buffer' },
    );
    const key = randomBytes(32);
    const target = await w.appDatabase('create table leftovers (id int);');
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
    const withGhost = await w.backupOf(from);
    await query(source.url, `revoke select on public.notes from ${ghost}`);
    await withAdmin((c) => c.query(`drop role ${ghost}`));
    const target = await w.appDatabase('');
    const to = await w.envOf(target.url);
    // Through the CLI, which says what was left out.
    const ctx = createCliContext({ CAIRN_API_URL: w.web().url, CAIRN_SECRET_KEY: from.secretKey });
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
    const [op] = await w.harness().db('backup_operations').where({ env_id: to.env.id, kind: 'restore' }).select('id');
    const res = await call<Json>(w.web().url, 'GET', `/v1/operations/${String(op!.id)}`, { key: from.secretKey });
    expect(res.body.response).toMatchObject({ skipped: { statements: 1, roles: [ghost] } });
    expect(await schemaText(target.url)).toBe(await schemaText(source.url));
  });
});
