// What a drill compares: the figures recorded at dump time with those of the restored copy.
import type { TableFigures } from '../format/dump-check.ts';

/** What differs between the figures recorded at dump time and those of the restored copy. */
export function tableDifferences(
  recorded: Record<string, TableFigures>,
  restored: Record<string, TableFigures>,
): string[] {
  const problems: string[] = [];
  for (const [table, want] of Object.entries(recorded)) {
    const got = restored[table];
    if (!got) problems.push(`${table} is missing after the restore`);
    else if (got.rows !== want.rows)
      problems.push(`${table} had ${want.rows} rows at dump time and ${got.rows} after the restore`);
    else if (got.checksum !== want.checksum)
      problems.push(
        `${table}'s rows differ from those at dump time (checksum ${want.checksum}, restored ${got.checksum})`,
      );
  }
  for (const table of Object.keys(restored))
    if (!(table in recorded)) problems.push(`${table} appears after the restore but was not in the backup`);
  return problems;
}

/** Why a backup has no catalog record: taken before they were kept, or one was not read (catalog.ts). */
export const noCatalog =
  'rows compared; no catalog was recorded with the backup (taken before catalogs were recorded, on a server older than PostgreSQL 12, or its catalog session was lost), so it was not compared';

/** A drill's reason: the first few differences, and how many more; null when there are none. */
export function summarize(problems: string[]): string | null {
  if (problems.length === 0) return null;
  const more = problems.length > 5 ? `, and ${problems.length - 5} more` : '';
  return `${problems.slice(0, 5).join('; ')}${more}`;
}
