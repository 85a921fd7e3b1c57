// A restore leaves the target's catalog as pg_dump saw the source's, through the API and a real
// worker: three public sample databases come back with the very same schema (pg_dump
// --schema-only, byte for byte) and rows, and a drill of each finds nothing different; a drill
// names an object whose catalog a restore cannot reproduce. Roles and grants: role-restore.test.ts.
import { describe, expect, it } from 'vitest';
import { databaseUrl } from '../support/pg.ts';
import { publicSchema, roleName, useRestoreWorld, type Json } from './restore-world.ts';
import { publicSamples, schemaText } from './samples.ts';
import { query, tableChecksums } from './support.ts';

const driller = roleName('driller');
const w = useRestoreWorld({ [driller]: 'login nosuperuser createdb' });

describe('public sample databases', () => {
  for (const [name, sql] of Object.entries(publicSamples())) {
    it(`${name}: a restore gives the same schema, grants and rows, and a drill finds no difference`, async () => {
      const [source, target] = await Promise.all([
        w.appDatabase(sql),
        w.appDatabase('create table leftovers (id int);'),
      ]);
      const [from, to] = await Promise.all([w.envOf(source.url), w.envOf(target.url)]);
      const backup = await w.backupOf(from);
      const op = await w.restore(backup, from, to);
      expect(op.response).toMatchObject({ skipped: { statements: 0, roles: [] } });
      expect(await schemaText(target.url)).toBe(await schemaText(source.url));
      const rows = await tableChecksums(source.url);
      expect(Object.keys(rows).length).toBeGreaterThan(5);
      expect(await tableChecksums(target.url)).toEqual(rows);
      expect(await publicSchema(target.url)).toEqual(await publicSchema(source.url));
      expect((await w.drill(from)).response).toEqual(expect.objectContaining({ verification: { result: 'passed' } }));
    });
  }
});

describe('a drill', () => {
  it("names the object whose catalog a restore by the environment's role cannot reproduce", async () => {
    const db = await w.ownedDatabase(driller, '');
    await query(
      databaseUrl(db.name),
      `create table public.audit (id int primary key); insert into public.audit select generate_series(1, 10);
       grant select on public.audit to ${driller};`,
    );
    const env = await w.envOf(db.url);
    await w.backupOf(env);
    const op = await w.drill(env);
    const verification = (op.response as Json).verification as { result: string; reason: string };
    expect(verification.result).toBe('failed');
    expect(verification.reason).toContain(
      `table public.audit: owner "postgres" at dump time, "${driller}" after the restore`,
    );
  });
});
