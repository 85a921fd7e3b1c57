// A backup's catalog record, and what a drill says of it. pg_dump's row figures (dump-check.ts)
// prove the data came back; they say nothing of owners, grants, comments, default privileges,
// definitions or extensions, which a restore can lose while every row is equal (a `public` schema
// without its USAGE grant locks every other role out). So a backup also records its database's
// catalog, object by object and facet by facet (catalog-queries.ts), read in the very snapshot
// pg_dump then dumps (pg_export_snapshot, `pg_dump --snapshot`), so DDL running meanwhile cannot
// make a difference appear; a drill reads its restored copy's catalog the same way and names each
// object that differs.
import pg from 'pg';
import { exportSnapshot, readCatalog, targetRoles, type Catalog } from './catalog-queries.ts';
import type { RoleFilterOptions } from './role-filter.ts';

/** Named as the work it is part of (a backup, a drill, a restore), as pg_stat_activity shows it. */
async function connect(url: string, application_name: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    application_name,
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  return client;
}

export interface CatalogSnapshot {
  /** The exported snapshot for pg_dump; null when the server would not export one (the dump then takes its own). */
  snapshot: string | null;
  /**
   * Reads the catalog in that snapshot. Started once pg_dump runs, alongside it: what it reads
   * locks what pg_dump locks (pg_get_expr opens its relation), so a table locked by someone else
   * holds both, as pg_dump alone would be held, rather than the backup before its dump begins.
   */
  read(): Promise<Catalog>;
  /** Ends the exporting transaction: only once pg_dump has finished. */
  close(): Promise<void>;
}

/** Opens a REPEATABLE READ transaction and exports its snapshot. */
export async function openCatalogSnapshot(url: string): Promise<CatalogSnapshot> {
  const client = await connect(url, 'cairn-backup');
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= client.end().catch(() => undefined));
  try {
    const snapshot = await exportSnapshot(client).catch(async () => {
      // A server that exports none (a hot standby before PostgreSQL 10): the catalog is read
      // beside the dump, in a snapshot of its own.
      await client.query('rollback');
      await client.query('begin isolation level repeatable read read only');
      return null;
    });
    return { snapshot, read: () => readCatalog(client), close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The catalog of the database at `url`, read in one snapshot. */
export async function catalogOf(url: string): Promise<Catalog> {
  const client = await connect(url, 'cairn-drill');
  try {
    await exportSnapshot(client);
    return await readCatalog(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The roles a restore's target has, and which of them its role can act as (role-filter.ts). */
export async function rolesOf(url: string): Promise<RoleFilterOptions> {
  const client = await connect(url, 'cairn-restore-roles');
  try {
    return await targetRoles(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const shown = (v: string | undefined): string => (v === undefined ? 'none' : JSON.stringify(v));

/** Every object whose facets differ between the record and the restored copy, named. */
export function catalogDifferences(recorded: Catalog, restored: Catalog): string[] {
  const out: string[] = [];
  for (const [object, want] of Object.entries(recorded)) {
    const got = restored[object];
    if (!got) {
      out.push(`${object} is missing after the restore`);
      continue;
    }
    for (const facet of new Set([...Object.keys(want), ...Object.keys(got)])) {
      if (want[facet] !== got[facet])
        out.push(`${object}: ${facet} ${shown(want[facet])} at dump time, ${shown(got[facet])} after the restore`);
    }
  }
  for (const object of Object.keys(restored))
    if (!(object in recorded)) out.push(`${object} appears after the restore but was not in the backup`);
  return out;
}
