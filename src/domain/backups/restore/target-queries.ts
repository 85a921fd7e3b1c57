// SQL against a restore's target (the environment's own database, not Cairn's): the roles it has
// (role-filter.ts), a dead worker's transaction's outcome (reconcile.ts), and the tables a
// restore would replace (target.ts).
import type pg from 'pg';
import type { RoleFilterOptions } from './role-filter.ts';

/**
 * Every role, and whether the connected role can act as it (superuser, itself, or a member); and
 * how many large objects' owner changes a restore may keep: a quarter of the server's shared lock
 * table (max_locks_per_transaction × (max_connections + max_prepared_transactions), lock.c), as
 * each holds a lock until COMMIT and the rest of the restore and the other sessions need theirs.
 */
export async function targetRoles(client: pg.Client): Promise<RoleFilterOptions> {
  const { rows } = await client.query<{ rolname: string; usable: boolean; me: boolean; superuser: boolean }>(
    `select rolname, pg_has_role(current_user, oid, 'MEMBER') as usable, rolname = current_user as me,
            (select rolsuper from pg_roles where rolname = current_user) as superuser
       from pg_roles`,
  );
  const { rows: locks } = await client.query<{ n: number }>(
    `select (current_setting('max_locks_per_transaction')::int
             * (current_setting('max_connections')::int + current_setting('max_prepared_transactions')::int) / 4)::int as n`,
  );
  return {
    roles: Object.fromEntries(rows.map((r) => [r.rolname, r.usable])),
    superuser: rows.some((r) => r.superuser),
    current: rows.find((r) => r.me)?.rolname ?? '',
    largeObjectOwners: locks[0]!.n,
  };
}

/** txid_status (PostgreSQL 10+): committed, aborted, in progress; null once too old to tell. */
export async function transactionStatus(client: pg.Client, xid: string): Promise<string | null> {
  return (await client.query<{ s: string | null }>('select txid_status($1::bigint) as s', [xid])).rows[0]!.s;
}

export interface TableEstimate {
  name: string;
  /** pg_class.reltuples: -1 for a table never vacuumed or analyzed (PostgreSQL 14+; 0 before). */
  reltuples: number;
  /** pg_class.relpages as of the last VACUUM or ANALYZE: 0 for one never done, or done while empty. */
  relpages: number;
  /** The table's main fork on disk now (pg_relation_size: a file size, no scan); 0 for a partitioned table. */
  bytes: number;
  partitioned: boolean;
}

/** The user tables with the planner's row estimates and their size on disk (no table scan). */
export async function tableEstimates(client: pg.Client): Promise<TableEstimate[]> {
  const { rows } = await client.query<TableEstimate>(
    `select format('%I.%I', n.nspname, c.relname) as name, c.reltuples::float8 as reltuples, c.relpages::int as relpages,
            pg_relation_size(c.oid)::float8 as bytes, c.relkind = 'p' as partitioned
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind in ('r', 'p') and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'
      order by 1`,
  );
  return rows;
}

/** count(*) of one table, `name` as tableEstimates quotes it (format %I.%I). */
export async function countRows(client: pg.Client, name: string): Promise<number> {
  return (await client.query<{ n: number }>(`select count(*)::float8 as n from ${name}`)).rows[0]!.n;
}
