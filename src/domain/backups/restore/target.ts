// What a restore reads of its target: the roles it has (role-filter.ts), a dead worker's
// transaction's outcome (reconcile.ts), and what a restore would replace.
import pg from 'pg';
import { connectTarget, onTarget } from '../target-db.ts';
import { tableEstimates, targetRoles, transactionStatus } from './target-queries.ts';
import type { RoleFilterOptions } from './role-filter.ts';

/** The roles a restore's target has, and which of them its role can act as (role-filter.ts). */
export async function rolesOf(url: string): Promise<RoleFilterOptions> {
  const client = await connectTarget(url, 'cairn-restore-roles');
  try {
    return await targetRoles(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Whether a transaction of the target committed (reconcile.ts). */
export async function transactionStatusOf(url: string, xid: string): Promise<string | null> {
  return onTarget(url, 'cairn-restore-check', (client) => transactionStatus(client, xid));
}

// What a restore would replace, read from the target's own catalog: its user tables with the
// planner's row estimates (pg_class.reltuples: no table scan, so a preview costs one short
// query whatever the database's size). Never connection details: the preview is shown to anyone
// who may restore, and where a database lives is the operator's business, not the caller's.

export interface TablePreview {
  name: string;
  /** The planner's estimate; null for a table never vacuumed or analyzed. */
  estimated_rows: number | null;
}

export interface ReplacePreview {
  tables: TablePreview[];
  table_count: number;
  estimated_rows: number;
}

const listed = 1000;

export async function targetTables(url: string): Promise<ReplacePreview | null> {
  const client = new pg.Client({
    connectionString: url,
    application_name: 'cairn-restore-preview',
    connectionTimeoutMillis: 5_000,
    statement_timeout: 5_000,
  });
  try {
    await client.connect();
    const rows = await tableEstimates(client);
    // reltuples is -1 for a table never analyzed (PostgreSQL 14+), 0 before 14.
    const tables = rows.map((r) => ({
      name: r.name,
      estimated_rows: r.reltuples < 0 ? null : Math.round(r.reltuples),
    }));
    return {
      tables: tables.slice(0, listed),
      table_count: tables.length,
      estimated_rows: tables.reduce((n, t) => n + (t.estimated_rows ?? 0), 0),
    };
  } catch {
    // Unreachable or refused: the error text would name the host, so say nothing of it.
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}
