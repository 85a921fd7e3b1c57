// Restores of dumps a tenant shaped: names that would end a comment the filter writes, and more
// large objects than one transaction has locks for. Through the API and a real worker.
import { describe, expect, it } from 'vitest';
import { withAdmin } from '../support/pg.ts';
import { roleName, useRestoreWorld } from './restore-world.ts';
import { query, tableChecksums } from './support.ts';

const app = roleName('app');
const maker = roleName('maker');
const other = roleName('other');
const w = useRestoreWorld({
  [app]: 'login nosuperuser nocreatedb',
  [other]: '',
  [maker]: 'login nosuperuser nocreatedb',
});

const tables = (url: string) =>
  query<{ t: string }>(
    url,
    "select relname as t from pg_class where relkind = 'r' and relnamespace = 'public'::regnamespace order by 1",
  );

describe('restoring what a tenant shaped', () => {
  it('runs nothing a table name holds after a carriage return, when its owner change is left out', async () => {
    // PostgreSQL and psql end a `--` comment at \r as at \n (scan.l, psqlscanslash.l: non_newline).
    const name = 'x\rCREATE TABLE public.pwned (a int); --';
    const source = await w.appDatabase('create table public.innocent (a int);');
    await withTable(source.url, name);
    const from = await w.envOf(source.url);
    const backup = await w.backupOf(from);
    const target = await w.ownedDatabase(app, '');
    const op = await w.restore(backup, from, await w.envOf(target.url));
    expect(op.response).toMatchObject({ skipped: { roles: expect.arrayContaining([other]) as unknown } });
    expect(await tables(target.url)).toEqual(await tables(source.url));
    expect((await tables(target.url)).map((r) => r.t)).not.toContain('pwned');
  });

  it("counts no tenant warning as one of Cairn's own left-out owner changes", async () => {
    const source = await w.appDatabase(`
      create function public.spoof(int) returns boolean language plpgsql as $$
        begin raise warning '%', 'cairn-left-out-owner:spoofed'; return true; end $$;
      create table public.t (a int check (public.spoof(a)));
      insert into public.t values (1);`);
    const from = await w.envOf(source.url);
    const backup = await w.backupOf(from);
    const target = await w.appDatabase('');
    const op = await w.restore(backup, from, await w.envOf(target.url));
    expect(op.response).toMatchObject({ skipped: { statements: 0, roles: [] } });
  });

  it('restores as a role with CREATE on the database that owns public but not the database', async () => {
    const source = await w.appDatabase('create table notes (id int); insert into notes values (1), (2);');
    const from = await w.envOf(source.url);
    const backup = await w.backupOf(from);
    const target = await w.appDatabase('');
    await withAdmin((c) => c.query(`grant create on database ${target.name} to ${maker}`));
    await query(target.url, `alter schema public owner to ${maker}`);
    const op = await w.restore(backup, from, await w.envOf(w.as(maker, target)));
    expect(op.response).toMatchObject({ skipped: { roles: ['postgres'] } });
    expect(await tableChecksums(target.url)).toEqual(await tableChecksums(source.url));
    const [schema] = await query<{ o: string }>(
      target.url,
      "select pg_get_userbyid(nspowner) as o from pg_namespace where nspname = 'public'",
    );
    expect(schema!.o).toBe(maker);
  });

  it('restores 40,000 large objects its own role owns, in one transaction', async () => {
    const sql = `select lo_from_bytea(0, convert_to('lo ' || g, 'UTF8')) from generate_series(1, 40000) g`;
    const source = await w.ownedDatabase(app, `create table docs (id int); ${sql};`);
    const from = await w.envOf(source.url);
    const backup = await w.backupOf(from);
    const target = await w.ownedDatabase(app, '');
    const op = await w.restore(backup, from, await w.envOf(target.url));
    expect(op.response).toMatchObject({ skipped: { statements: 0, roles: [] } });
    const count = async (url: string) =>
      (
        await query<{ n: number; owner: string }>(
          url,
          'select count(*)::int as n, min(pg_get_userbyid(lomowner)) as owner from pg_largeobject_metadata',
        )
      )[0];
    expect(await count(target.url)).toEqual({ n: 40000, owner: app });
    expect(await tableChecksums(target.url)).toEqual(await tableChecksums(source.url));
  });

  it("keeps owners of another role's large objects up to a share of the lock table, and reports the rest", async () => {
    const source = await w.appDatabase(
      `select lo_from_bytea(0, convert_to('lo ' || g, 'UTF8')) from generate_series(1, 3000) g;
       do $$ declare l oid; begin for l in select oid from pg_largeobject_metadata loop
         execute format('alter large object %s owner to ${other}', l); end loop; end $$;`,
    );
    const from = await w.envOf(source.url);
    const backup = await w.backupOf(from);
    const target = await w.appDatabase('');
    const op = await w.restore(backup, from, await w.envOf(target.url));
    const [{ budget }] = (await query<{ budget: number }>(
      target.url,
      `select (current_setting('max_locks_per_transaction')::int * (current_setting('max_connections')::int + current_setting('max_prepared_transactions')::int) / 4)::int as budget`,
    )) as [{ budget: number }];
    expect(op.response).toMatchObject({ skipped: { statements: 3000 - budget, roles: [other] } });
    const [owned] = await query<{ n: number }>(
      target.url,
      `select count(*)::int as n from pg_largeobject_metadata where lomowner = '${other}'::regrole`,
    );
    expect(owned!.n).toBe(budget);
  });
});

async function withTable(url: string, name: string): Promise<void> {
  const ident = `"${name.replace(/"/g, '""')}"`;
  await query(url, `create table public.${ident} (a int); alter table public.${ident} owner to ${other}`);
}
