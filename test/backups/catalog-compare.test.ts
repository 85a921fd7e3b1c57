// A drill's catalog comparison on its own (a pure function): each object that differs is named,
// with the facet and both values, and nothing is said of objects that are equal.
import { describe, expect, it } from 'vitest';
import { catalogDifferences } from '../../src/domain/backups/capture/catalog.ts';
import { summarize } from '../../src/domain/backups/drills/compare.ts';

const recorded = {
  'schema public': {
    owner: 'pg_database_owner',
    acl: '=U/pg_database_owner,pg_database_owner=UC/pg_database_owner',
    comment: 'standard public schema',
  },
  'table public.notes': { owner: 'app', columns: 'id integer not null, body text' },
  'type public.status': { kind: 'e', labels: 'new,paid' },
  'extension citext': { version: '1.6', schema: 'public' },
};

describe('catalog differences', () => {
  it('finds none between equal catalogs', () => {
    expect(catalogDifferences(recorded, structuredClone(recorded))).toEqual([]);
    expect(summarize([])).toBeNull();
  });

  it('names each object, facet and value that differ, and objects missing or added', () => {
    const restored = structuredClone(recorded) as Record<string, Record<string, string>>;
    restored['schema public']!.acl = 'pg_database_owner=UC/pg_database_owner';
    delete restored['schema public']!.comment;
    restored['type public.status']!.labels = 'new,paid,void';
    delete restored['extension citext'];
    restored['index public.notes_body'] = { definition: 'CREATE INDEX notes_body ON public.notes USING btree (body)' };
    const found = catalogDifferences(recorded, restored);
    expect(found).toEqual([
      'schema public: acl "=U/pg_database_owner,pg_database_owner=UC/pg_database_owner" at dump time, "pg_database_owner=UC/pg_database_owner" after the restore',
      'schema public: comment "standard public schema" at dump time, none after the restore',
      'type public.status: labels "new,paid" at dump time, "new,paid,void" after the restore',
      'extension citext is missing after the restore',
      'index public.notes_body appears after the restore but was not in the backup',
    ]);
    expect(summarize([...found, 'one more'])).toBe(`${found.join('; ')}, and 1 more`);
  });

  it('says a definition may have changed while the backup ran: it is printed from the live catalog, not the snapshot', () => {
    const want = { 'function public.f()': { owner: 'app', definition: 'md5:aaa' } };
    const got = { 'function public.f()': { owner: 'app', definition: 'md5:bbb' } };
    expect(catalogDifferences(want, got)).toEqual([
      'function public.f(): definition "md5:aaa" at dump time, "md5:bbb" after the restore (definitions are read from the live catalog: it may have changed while the backup ran)',
    ]);
  });
});
