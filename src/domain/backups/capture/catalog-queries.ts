// SQL against an environment's own database (not Cairn's): the catalog snapshot a backup records
// and a drill compares (catalog.ts).
import type pg from 'pg';
import type { Db } from '../../../db.ts';

/**
 * Begins the REPEATABLE READ transaction a catalog is read in. It sits idle while pg_dump runs:
 * the database's idle_in_transaction_session_timeout must not end it (and the snapshot pg_dump
 * imports) meanwhile, so it is turned off for this transaction only. Both go in one simple-query
 * message: the server runs them back to back, never idle between them, so a short timeout cannot
 * end the session in the gap a second round trip would leave (a busy worker can stall longer than
 * a 300 ms timeout between two awaits).
 */
export async function beginSnapshot(client: pg.Client): Promise<void> {
  await client.query(
    'begin isolation level repeatable read read only; set local idle_in_transaction_session_timeout = 0',
  );
}

/** Begins that transaction and exports its snapshot (pg_dump --snapshot). */
export async function exportSnapshot(client: pg.Client): Promise<string> {
  await beginSnapshot(client);
  return (await client.query<{ s: string }>('select pg_export_snapshot() as s')).rows[0]!.s;
}

/** Ends the transaction, so a failed export leaves the session ready to begin again. */
export async function rollback(client: pg.Client): Promise<void> {
  await client.query('rollback');
}

/**
 * The query below reads pg_attribute.attgenerated (PostgreSQL 12+), pg_proc.prokind (11+),
 * pg_sequence and relispartition (10+): on an older server no catalog is recorded (a drill then
 * compares rows only), rather than a backup failing over it.
 */
export const catalogSupported = (serverVersionNum: number): boolean => serverVersionNum >= 120000;

// An index a failed or running CREATE INDEX CONCURRENTLY left invalid is not dumped (pg_dump.c,
// getIndexes: valid, or on a partitioned table, and ready), so it is not recorded either.
// One row per object and facet. Objects are named as a person reads them (`table public.film`,
// `function public.f(integer)`); pg_catalog, information_schema and the toast/temp schemas are
// left out, as pg_dump leaves them. ACLs are compared as sets and with their default spelled out
// (acldefault), since a NULL ACL and an explicit one equal to the default mean the same and
// pg_dump writes neither. Long values (definitions) are kept as their md5. A sequence's value is
// not compared: it is not transactional, so no snapshot holds it, and pg_dump reads it at its own
// moment (a busy application's nextval between the two reads would be a false difference).
const user = (nsp: string) => `${nsp} not in ('pg_catalog', 'information_schema') and ${nsp} !~ '^pg_(toast|temp)'`;
const acl = (col: string, kind: string, owner: string) =>
  `(select string_agg(a::text, ',' order by a::text) from unnest(coalesce(${col}, acldefault(${kind}, ${owner}))) a)`;
// An extension's own objects are its install script's, which CREATE EXTENSION runs again (owned
// by whoever runs it): the extension and its version stand for them, as in pg_dump.
const ownObject = (catalog: string, oid: string) =>
  `not exists (select 1 from pg_depend e where e.classid = '${catalog}'::regclass and e.objid = ${oid} and e.deptype = 'e')`;
const roleName = (oid: string) => `pg_get_userbyid(${oid})::text`;

const facets = `
select 'schema ' || quote_ident(n.nspname) as object, f.k, f.v
  from pg_namespace n,
  lateral (values ('owner', ${roleName('n.nspowner')}), ('acl', ${acl('n.nspacl', "'n'", 'n.nspowner')}),
                  ('comment', obj_description(n.oid, 'pg_namespace'))) f(k, v)
 where ${user('n.nspname')}
union all
select case c.relkind when 'r' then 'table' when 'p' then 'partitioned table' when 'v' then 'view'
         when 'm' then 'materialized view' when 'S' then 'sequence' when 'f' then 'foreign table' else 'relation' end
       || ' ' || c.oid::regclass::text, f.k, f.v
  from pg_class c join pg_namespace n on n.oid = c.relnamespace,
  lateral (values ('owner', ${roleName('c.relowner')}),
    ('acl', ${acl('c.relacl', "(case c.relkind when 'S' then 's' else 'r' end)::\"char\"", 'c.relowner')}),
    ('comment', obj_description(c.oid, 'pg_class')), ('options', array_to_string(c.reloptions, ',')),
    ('persistence', c.relpersistence::text), ('row security', c.relrowsecurity || '/' || c.relforcerowsecurity),
    ('definition', case when c.relkind in ('v', 'm') then pg_get_viewdef(c.oid) end),
    ('partition key', case when c.relkind = 'p' then pg_get_partkeydef(c.oid) end),
    ('partition bound', case when c.relispartition then pg_get_expr(c.relpartbound, c.oid) end),
    ('columns', (select string_agg(format('%I %s%s%s%s%s%s', a.attname, format_type(a.atttypid, a.atttypmod),
        case when a.attnotnull then ' not null' end, ' default ' || pg_get_expr(d.adbin, d.adrelid),
        nullif(' identity ' || a.attidentity::text, ' identity '), nullif(' generated ' || a.attgenerated::text, ' generated '),
        ' comment ' || col_description(c.oid, a.attnum)) || coalesce(' acl ' || (select string_agg(x::text, ',' order by x::text) from unnest(a.attacl) x), ''),
        ', ' order by a.attnum)
      from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
     where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped)),
    ('sequence', (select concat_ws(' ', format_type(s.seqtypid, null), s.seqstart, s.seqmin, s.seqmax,
        s.seqincrement, s.seqcycle, s.seqcache) from pg_sequence s where s.seqrelid = c.oid))
  ) f(k, v)
 where c.relkind in ('r', 'p', 'v', 'm', 'S', 'f') and ${user('n.nspname')} and ${ownObject('pg_class', 'c.oid')}
union all
select 'index ' || c.oid::regclass::text, 'definition', pg_get_indexdef(c.oid)
  from pg_class c join pg_namespace n on n.oid = c.relnamespace join pg_index x on x.indexrelid = c.oid
 where c.relkind in ('i', 'I') and ${user('n.nspname')} and x.indisready
   and (x.indisvalid or (select t.relkind from pg_class t where t.oid = x.indrelid) = 'p')
union all
select 'constraint ' || quote_ident(co.conname) || ' on ' || coalesce(nullif(co.conrelid, 0)::regclass::text, format_type(co.contypid, null)),
       'definition', pg_get_constraintdef(co.oid)
  from pg_constraint co join pg_namespace n on n.oid = co.connamespace
 where ${user('n.nspname')}
union all
select case p.prokind when 'p' then 'procedure ' when 'a' then 'aggregate ' else 'function ' end || p.oid::regprocedure::text, f.k, f.v
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace,
  lateral (values ('owner', ${roleName('p.proowner')}), ('acl', ${acl('p.proacl', "'f'", 'p.proowner')}),
    ('comment', obj_description(p.oid, 'pg_proc')),
    ('definition', case when p.prokind <> 'a' then pg_get_functiondef(p.oid) end)) f(k, v)
 where ${user('n.nspname')} and ${ownObject('pg_proc', 'p.oid')}
union all
select 'trigger ' || quote_ident(t.tgname) || ' on ' || t.tgrelid::regclass::text, 'definition',
       pg_get_triggerdef(t.oid) || ' enabled ' || t.tgenabled::text
  from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
 where not t.tgisinternal and ${user('n.nspname')}
union all
select 'type ' || format_type(t.oid, null), f.k, f.v
  from pg_type t join pg_namespace n on n.oid = t.typnamespace,
  lateral (values ('owner', ${roleName('t.typowner')}), ('acl', ${acl('t.typacl', "'T'", 't.typowner')}),
    ('comment', obj_description(t.oid, 'pg_type')), ('kind', t.typtype::text),
    ('labels', (select string_agg(e.enumlabel, ',' order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid)),
    ('domain', case when t.typtype = 'd' then concat_ws(' ', format_type(t.typbasetype, t.typtypmod),
        case when t.typnotnull then 'not null' end, t.typdefault) end)) f(k, v)
 where (t.typrelid = 0 or (select relkind from pg_class where oid = t.typrelid) = 'c') and ${ownObject('pg_type', 't.oid')}
   and not exists (select 1 from pg_type x where x.typarray = t.oid) and ${user('n.nspname')}
union all
select 'default privileges for ' || ${roleName('d.defaclrole')} || coalesce(' in schema ' || quote_ident(n.nspname), '')
       || ' on ' || case d.defaclobjtype when 'r' then 'tables' when 'S' then 'sequences' when 'f' then 'functions'
                   when 'T' then 'types' when 'n' then 'schemas' end,
       'acl', (select string_agg(a::text, ',' order by a::text) from unnest(d.defaclacl) a)
  from pg_default_acl d left join pg_namespace n on n.oid = d.defaclnamespace
union all
select 'extension ' || quote_ident(e.extname), f.k, f.v
  from pg_extension e join pg_namespace n on n.oid = e.extnamespace,
  lateral (values ('version', e.extversion), ('schema', n.nspname)) f(k, v)
union all
select 'policy ' || quote_ident(p.polname) || ' on ' || p.polrelid::regclass::text, 'definition',
       concat_ws(' ', p.polcmd::text, p.polpermissive, (select string_agg(${roleName('r')}, ',' order by 1) from unnest(p.polroles) r),
                 pg_get_expr(p.polqual, p.polrelid), pg_get_expr(p.polwithcheck, p.polrelid))
  from pg_policy p
union all
select 'rule ' || quote_ident(r.rulename) || ' on ' || r.ev_class::regclass::text, 'definition', pg_get_ruledef(r.oid)
  from pg_rewrite r join pg_class c on c.oid = r.ev_class join pg_namespace n on n.oid = c.relnamespace
 where r.rulename <> '_RETURN' and ${user('n.nspname')}`;

/**
 * The catalog as `client` sees it (in its transaction's snapshot when it has one): object → facet
 * → value; null on a server older than the query supports.
 */
export async function readCatalog(client: pg.Client): Promise<Catalog | null> {
  const { rows: version } = await client.query<{ v: string }>("select current_setting('server_version_num') as v");
  if (!catalogSupported(Number(version[0]!.v))) return null;
  // search_path empty: every name comes out schema-qualified, as pg_dump writes them.
  await client.query("select set_config('search_path', '', true)");
  const { rows } = await client.query<{ object: string; k: string; v: string }>(
    `select object, k, case when length(v) <= 120 then v else 'md5:' || md5(v) end as v
       from (${facets}) x where v is not null order by 1, 2`,
  );
  const out: Catalog = {};
  for (const r of rows) (out[r.object] ??= {})[r.k] = r.v;
  return out;
}

export type Catalog = Record<string, Record<string, string>>;

/** Where a backup's catalog record is kept (a table of its own: listing backups never reads it). */
export function catalogStore(db: Db) {
  return {
    async save(backupId: string, catalog: Catalog): Promise<void> {
      await db('backup_catalogs')
        .insert({ backup_id: backupId, catalog: JSON.stringify(catalog) })
        .onConflict('backup_id')
        .merge();
    },
    async get(backupId: string): Promise<Catalog | null> {
      const row = (await db('backup_catalogs').where({ backup_id: backupId }).first('catalog')) as
        { catalog: Catalog } | undefined;
      return row?.catalog ?? null;
    },
  };
}
