// What a restore would replace, read from the target's own catalog: its user tables with the
// planner's row estimates (pg_class.reltuples: no table scan, so a preview costs one short
// query whatever the database's size). Never connection details: the preview is shown to anyone
// who may restore, and where a database lives is the operator's business, not the caller's.
import pg from 'pg';

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
    const { rows } = await client.query<{ name: string; reltuples: number }>(
      `select format('%I.%I', n.nspname, c.relname) as name, c.reltuples::float8 as reltuples
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where c.relkind in ('r', 'p') and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg\\_%'
        order by 1`,
    );
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
