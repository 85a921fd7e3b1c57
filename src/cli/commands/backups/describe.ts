// How the backup commands print what the API answers.
import type { Backup, BackupSettings, Operation, RestorePreview } from '../../../sdk/backups.ts';
import { CliError } from '../../context.ts';
import { mib } from '../../progress.ts';

export function describeDrill(b: Backup): string {
  if (!b.verification) return 'not drilled';
  return `drill ${b.verification.result} ${b.verified_time ?? ''}${b.verification.reason ? `\n    drill: ${b.verification.reason}` : ''}`;
}

export function describeBackup(b: Backup): string {
  const drill = b.state === 'succeeded' ? `  ${describeDrill(b)}` : '';
  return `${b.id}  ${b.state.padEnd(9)} ${b.type.padEnd(7)} ${b.trigger.padEnd(11)} ${mib(b.size_bytes).padStart(10)}  ${b.create_time}${b.billable ? '  billable' : ''}${drill}${b.error ? `\n    error: ${b.error}` : ''}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** `--at`: a whole hour in UTC, as Heroku's `pg:backups:schedule --at "02:00 UTC"` takes it. */
export function scheduleHour(value: string): number {
  const m = /^\s*(\d{1,2})(?::00)?\s*(?:UTC)?\s*$/i.exec(value);
  const hour = m ? Number(m[1]) : NaN;
  if (!(hour >= 0 && hour <= 23))
    throw new CliError(`--at takes a whole hour in UTC, such as "02:00 UTC" or "14:00" (not "${value}")`);
  return hour;
}

/** `cairn backups info`: one field a line, as `heroku pg:backups:info` shows a backup. */
export function backupInfo(b: Backup): string {
  const rows: [string, string | number | null | undefined][] = [
    ['Backup', b.id],
    ['State', b.state],
    ['Type', `${b.type} (${b.trigger})`],
    ['Object', b.key],
    ['Size', b.size_bytes === null ? null : `${mib(b.size_bytes)} (${b.size_bytes} bytes)`],
    ['SHA-256', b.sha256],
    ['Postgres', b.pg_version],
    ['pg_dump', b.pg_dump_version],
    ['Encryption', b.encryption ? `${b.encryption.algorithm}, key ${b.encryption.key_id}` : null],
    ['Created', b.create_time],
    ['Started', b.start_time],
    ['Finished', b.finish_time],
    ['Duration', b.duration_ms === null ? null : `${(b.duration_ms / 1000).toFixed(1)} s`],
    ['Expires', b.expire_time],
    ['Billable', b.billable ? 'yes' : 'no'],
    ['Drill', b.state === 'succeeded' ? describeDrill(b) : null],
    ['Error', b.error],
  ];
  return rows
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => `${`${k}:`.padEnd(12)}${v}`)
    .join('\n');
}

/** The target's tables that a restore replaces, largest first, as the plan prints them. */
export function describeReplaced(plan: RestorePreview): string {
  if (!plan.replaces)
    return `  replaces: the whole database (every schema); ${plan.replaces_unknown ?? 'its tables could not be listed'}`;
  const { tables, table_count, estimated_rows } = plan.replaces;
  if (table_count === 0) return '  replaces: the whole database (every schema); it holds no tables now';
  const largest = [...tables].sort((x, y) => (y.estimated_rows ?? -1) - (x.estimated_rows ?? -1)).slice(0, 10);
  const lines = largest.map((t) => `    ${t.name}  ${rowsOf(t)}`);
  const more = table_count > largest.length ? `\n    … and ${table_count - largest.length} more tables` : '';
  const unknown = tables.filter((t) => t.estimated_rows === null).length;
  const allExact = unknown === 0 && tables.every((t) => t.exact) && tables.length === table_count;
  const total = `${allExact ? '' : '~'}${estimated_rows.toLocaleString('en-US')} rows in all${unknown > 0 ? ` (and ${unknown} tables whose rows are unknown)` : ''}`;
  return `  replaces: the whole database (every schema): ${table_count} tables, ${total}\n${lines.join('\n')}${more}`;
}

/** Counted rows as they are, estimates with ~, and "rows unknown" where the planner has none (never analyzed). */
function rowsOf(t: { estimated_rows: number | null; exact: boolean }): string {
  if (t.estimated_rows === null) return 'rows unknown (never analyzed)';
  const n = t.estimated_rows.toLocaleString('en-US');
  return t.exact ? `${n} rows` : `~${n} rows`;
}

export const describeSchedule = (x: BackupSettings): string =>
  x.schedule_enabled
    ? `daily at ${pad(x.schedule_hour_utc)}:00 UTC (kept ${x.retention_days.daily} days), weekly on Sunday (${x.retention_days.weekly} days), monthly on the 1st (${x.retention_days.monthly} days); restore drills ${x.drill_schedule}`
    : `no scheduled backups (turn them on with: cairn backups schedule --at "03:00 UTC"); restore drills ${x.drill_schedule}`;

/** What a restore left out because of roles (docs/api.md "What a restore keeps"), or nothing. */
export function leftOut(o: Operation): string {
  const s = o.response?.skipped;
  if (!s || s.statements === 0) return '';
  return `\n${s.statements} statement(s) left out: they name roles this database's server lacks or its role may not act as (${s.roles.join(', ')})`;
}
