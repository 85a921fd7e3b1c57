// What a restore reads of its target: the roles it has (role-filter.ts), a dead worker's
// transaction's outcome (reconcile.ts), and what a restore would replace.
import pg from 'pg';
import { connectTarget, onTarget } from '../target-db.ts';
import { countRows, tableEstimates, targetRoles, transactionStatus, type TableEstimate } from './target-queries.ts';
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
//
// The planner's figures are those of the last VACUUM or ANALYZE: none for a table never analyzed
// (reltuples -1 on PostgreSQL 14+), and 0 rows for one analyzed while it was empty (relpages 0),
// however many rows it holds now. A freshly loaded database is all of those, and "~0 rows" would
// tell its owner there is nothing to lose. So a small table (up to 1 MiB on disk, the first
// `counted` of them) is counted exactly, which costs at most a few milliseconds each; a larger
// one keeps the planner's estimate, or shows unknown (null) where the planner has none.

export interface TablePreview {
  name: string;
  /** Exact where `exact`, else the planner's estimate; null when unknown (never analyzed, too large to count). */
  estimated_rows: number | null;
  exact: boolean;
}

export interface ReplacePreview {
  tables: TablePreview[];
  table_count: number;
  /** The sum of the known figures; tables whose rows are unknown add nothing. */
  estimated_rows: number;
}

const listed = 1000;
const countedBytes = 1024 * 1024;
const counted = 100;

/** The planner's figure, or null when it has none worth showing. */
function plannerRows(t: TableEstimate): number | null {
  if (t.reltuples < 0) return null;
  // relpages 0 with pages on disk now: analyzed while empty (or never, before PostgreSQL 14).
  if (!t.partitioned && t.relpages === 0 && t.bytes > 0) return null;
  return Math.round(t.reltuples);
}

async function preview(client: pg.Client, t: TableEstimate, budget: { left: number }): Promise<TablePreview> {
  if (!t.partitioned && t.bytes <= countedBytes && budget.left > 0) {
    budget.left--;
    // A table the role may not read, or a count past the statement timeout: the estimate stands.
    const n = await countRows(client, t.name).catch(() => undefined);
    if (n !== undefined) return { name: t.name, estimated_rows: n, exact: true };
  }
  return { name: t.name, estimated_rows: plannerRows(t), exact: false };
}

export async function targetTables(url: string): Promise<ReplacePreview | null> {
  const client = new pg.Client({
    connectionString: url,
    application_name: 'cairn-restore-preview',
    connectionTimeoutMillis: 5_000,
    statement_timeout: 5_000,
  });
  try {
    await client.connect();
    const budget = { left: counted };
    const tables: TablePreview[] = [];
    for (const t of await tableEstimates(client)) tables.push(await preview(client, t, budget));
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
