// A backup's catalog record, and what a drill says of it. pg_dump's row figures (dump-check.ts)
// prove the data came back; they say nothing of owners, grants, comments, default privileges,
// definitions or extensions, which a restore can lose while every row is equal (a `public` schema
// without its USAGE grant locks every other role out). So a backup also records its database's
// catalog, object by object and facet by facet (catalog-queries.ts), read in the transaction
// whose snapshot pg_dump then dumps (pg_export_snapshot, `pg_dump --snapshot`). The catalog rows
// it reads are the snapshot's, but the functions that print definitions (pg_get_functiondef,
// pg_get_viewdef, pg_get_indexdef, pg_get_constraintdef, pg_get_triggerdef, pg_get_ruledef,
// pg_get_expr) read the live catalog (ruleutils.c, through the syscache), as pg_dump's own calls
// to them do: DDL committed while a backup runs can make a definition differ, and a drill says so.
// A drill reads its restored copy's catalog the same way and names each object that differs.
//
// The catalog never fails a backup: on a server older than its query supports, or when its
// session is lost (idle_in_transaction_session_timeout, pg_terminate_backend, a failover), the
// dump is still good and the backup records no catalog; a drill then compares rows only.
import { connectTarget as connect } from '../target-db.ts';
import { beginSnapshot, exportSnapshot, readCatalog, rollback, type Catalog } from './catalog-queries.ts';

/** A catalog read for a backup, or why none was. */
export type CatalogRecord = { catalog: Catalog } | { catalog: null; why: string };

export interface CatalogSnapshot {
  /** The exported snapshot for pg_dump; null when the server would not export one (the dump then takes its own). */
  snapshot: string | null;
  /**
   * Reads the catalog in that snapshot, then ends the exporting transaction as soon as `dumped`
   * (pg_dump's exit) settles: it holds back vacuum (xmin) and AccessShareLocks that would keep an
   * ALTER TABLE waiting, so not for the upload's length. Started once pg_dump runs, alongside it:
   * what it reads locks what pg_dump locks (pg_get_expr opens its relation), so a table locked by
   * someone else holds both, as pg_dump alone would be held. Never rejects.
   */
  record(dumped: Promise<unknown>): Promise<CatalogRecord>;
  /** Ends the transaction and the session (also when record() was never called). */
  close(): Promise<void>;
}

/** Opens a REPEATABLE READ transaction and exports its snapshot. */
export async function openCatalogSnapshot(url: string): Promise<CatalogSnapshot> {
  const client = await connect(url, 'cairn-backup');
  // The session sits idle in its transaction while pg_dump runs; if the server ends it, pg emits
  // 'error' on the client, which without a listener would end the worker's process.
  let lost: Error | undefined;
  client.on('error', (err) => (lost ??= err));
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= client.end().catch(() => undefined));
  try {
    const snapshot = await exportSnapshot(client).catch(async () => {
      // A server that exports none (a hot standby before PostgreSQL 10): the catalog is read
      // beside the dump, in a snapshot of its own.
      await rollback(client);
      await beginSnapshot(client);
      return null;
    });
    const record = async (dumped: Promise<unknown>): Promise<CatalogRecord> => {
      try {
        // Once read, a session lost while pg_dump still runs takes nothing from the record.
        const catalog = await readCatalog(client);
        await dumped.catch(() => undefined);
        return catalog ? { catalog } : { catalog: null, why: 'the server is older than PostgreSQL 12' };
      } catch (err) {
        return { catalog: null, why: `its session was lost: ${(lost ?? (err as Error)).message}` };
      } finally {
        await close();
      }
    };
    return { snapshot, record, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The catalog of the database at `url`, read in one snapshot. */
export async function catalogOf(url: string): Promise<Catalog | null> {
  const client = await connect(url, 'cairn-drill');
  try {
    await exportSnapshot(client);
    return await readCatalog(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const shown = (v: string | undefined): string => (v === undefined ? 'none' : JSON.stringify(v));

/** Definitions are printed from the live catalog, not the dump's snapshot (above). */
const live = ' (definitions are read from the live catalog: it may have changed while the backup ran)';

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
        out.push(
          `${object}: ${facet} ${shown(want[facet])} at dump time, ${shown(got[facet])} after the restore${facet === 'definition' ? live : ''}`,
        );
    }
  }
  for (const object of Object.keys(restored))
    if (!(object in recorded)) out.push(`${object} appears after the restore but was not in the backup`);
  return out;
}
