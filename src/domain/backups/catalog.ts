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

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    application_name: 'cairn-catalog',
    connectionTimeoutMillis: 10_000,
  });
  await client.connect();
  return client;
}

export interface CatalogSnapshot {
  /** The exported snapshot for pg_dump; null when the server would not export one (the dump then reads its own). */
  snapshot: string | null;
  catalog: Catalog;
  /** Ends the exporting transaction: only once pg_dump has finished. */
  close(): Promise<void>;
}

/** Opens a REPEATABLE READ transaction, exports its snapshot and reads the catalog in it. */
export async function openCatalogSnapshot(url: string): Promise<CatalogSnapshot> {
  const client = await connect(url);
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= client.end().catch(() => undefined));
  try {
    const snapshot = await exportSnapshot(client).catch(async () => {
      // A server that exports none (a hot standby before PostgreSQL 10): the catalog is read
      // just before the dump starts instead of in its snapshot.
      await client.query('rollback');
      await client.query('begin isolation level repeatable read read only');
      return null;
    });
    const catalog = await readCatalog(client);
    return { snapshot, catalog, close };
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
}

/** The catalog of the database at `url`, read in one snapshot. */
export async function catalogOf(url: string): Promise<Catalog> {
  const client = await connect(url);
  try {
    await exportSnapshot(client);
    return await readCatalog(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The roles a restore's target has, and which of them its role can act as (role-filter.ts). */
export async function rolesOf(url: string): Promise<RoleFilterOptions> {
  const client = await connect(url);
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
