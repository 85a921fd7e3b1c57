// Request and response shapes of backups and restores (docs/api.md "Backups"); the presenters that
// turn stored rows into them are domain/backups/present.ts.
import { z } from 'zod';
import { pageOf, pageQuery } from './pages.ts';
import { resource } from './resource.ts';
import { envParams } from './tenancy.ts';

export { envParams, pageQuery };

export const backupIdParams = z.object({
  backup_id: z.string().regex(/^backup_[0-9a-z]{26}$/, 'a backup id, backup_…'),
});
export const operationParams = z.object({
  operation_id: z.string().regex(/^op_[0-9a-z]{26}$/, 'an operation id, op_…'),
});

export const createBackupBody = z.object({ type: z.literal('manual').default('manual') }).strict();
export const drillBody = z.object({}).strict();
export const restorePreview = resource('RestorePreview', {
  backup: z.lazy(() => backup),
  target_env: z.string(),
  target_mode: z.enum(['test', 'live']),
  replaces: z
    .object({
      tables: z
        .array(
          z.object({
            name: z.string(),
            estimated_rows: z.number().nullable().meta({
              description:
                "Rows: counted where `exact` (tables up to 1 MiB on disk), else the planner's estimate; null when unknown (never analyzed)",
            }),
            exact: z.boolean(),
          }),
        )
        .meta({ description: "The target's tables (first 1000), with their rows, counted or estimated" }),
      table_count: z.number(),
      estimated_rows: z.number(),
    })
    .nullable()
    .meta({
      description: 'What the restore would replace: every schema of the target database; null when it did not answer',
    }),
  replaces_unknown: z.string().optional(),
});
export type RestorePreview = z.output<typeof restorePreview>;

export const restoreBody = z
  .object({ targetEnv: z.string().min(1).max(300).meta({ example: 'orgs/acme/projects/shop/envs/staging' }) })
  .strict();

/** A restore drill's verdict (a fresh schema at each use, so the document inlines it as before). */
const verification = () => z.object({ result: z.enum(['passed', 'failed']), reason: z.string().optional() });
export type Verification = z.output<ReturnType<typeof verification>>;

export const backup = resource('Backup', {
  id: z.string(),
  state: z.enum(['pending', 'running', 'succeeded', 'failed']),
  type: z.enum(['daily', 'weekly', 'monthly', 'manual']),
  trigger: z.enum(['schedule', 'manual', 'pre_restore']),
  key: z
    .string()
    .meta({ description: 'Object key in the backup bucket: backups/db/{appId}/{envId}/{timestamp}.sql.gz' }),
  size_bytes: z.number().nullable(),
  sha256: z.string().nullable().meta({ description: 'SHA-256 of the stored (encrypted) object' }),
  billable: z.boolean(),
  duration_ms: z.number().nullable(),
  pg_version: z.string().nullable(),
  pg_dump_version: z.string().nullable(),
  encryption: z.object({ format: z.string(), algorithm: z.string(), key_id: z.string() }).nullable(),
  error: z.string().nullable().meta({ description: 'Why a failed backup failed, in words a person can act on' }),
  verified_time: z.string().nullable().meta({ description: 'When the latest restore drill of this backup ran' }),
  verification: verification().nullable().meta({
    description:
      "The latest restore drill's verdict: the backup restored into a scratch database and every table matched what was recorded at dump time",
  }),
  create_time: z.string(),
  start_time: z.string().nullable(),
  finish_time: z.string().nullable(),
  expire_time: z.string(),
  progress_bytes: z.number().optional().meta({
    description: 'While running: bytes stored so far (compressed, encrypted), refreshed every second or so',
  }),
});
export type Backup = z.output<typeof backup>;
export type BackupState = Backup['state'];

export const backupList = pageOf('backups', backup).meta({ id: 'BackupList' });

export const operation = resource('Operation', {
  name: z.string().meta({ example: 'operations/op_01jd…' }),
  done: z.boolean(),
  metadata: z.object({
    kind: z.enum(['restore', 'drill']),
    backup_id: z.string().nullable(),
    target_env: z.string(),
    pre_restore_backup_id: z.string().nullable(),
    state: z.enum(['pending', 'running', 'succeeded', 'failed']),
    phase: z.string().nullable().meta({
      description:
        'restore: pre_restore_backup, verifying, restoring, committing, done; drill: verifying, restoring, comparing, done',
    }),
    bytes_read: z.number(),
    bytes_total: z.number(),
    create_time: z.string(),
    update_time: z.string(),
  }),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  response: z
    .object({
      backup_id: z.string().nullable(),
      target_env: z.string(),
      pre_restore_backup_id: z.string().nullable(),
      verification: verification().optional().meta({ description: "A drill's verdict" }),
      skipped: z
        .object({ statements: z.number(), roles: z.array(z.string()) })
        .optional()
        .meta({
          description:
            "A restore's owner changes, grants and default privileges left out because the target has no such role or the restoring role cannot act as it",
        }),
    })
    .optional(),
});
export type Operation = z.output<typeof operation>;

export const usage = resource('BackupUsage', {
  date: z.string(),
  manual_today: z.number(),
  free_manual_per_day: z.number(),
  free_left: z.number(),
  billable_today: z.number(),
  stored_bytes: z.number(),
  stored_gb: z.number(),
  usd_per_gb_month: z.number(),
  monthly_estimate_usd: z.number(),
});
export type BackupUsage = z.output<typeof usage>;

const days = z.number().int().min(1).max(3650);
const drillSchedule = z.enum(['off', 'daily', 'weekly']).meta({
  description: 'Restore drills of the latest backup; default weekly in test environments and off in live ones',
});
export const settings = resource('BackupSettings', {
  schedule_enabled: z.boolean(),
  schedule_hour_utc: z.number().int().min(0).max(23).meta({
    description: 'The UTC hour of the daily (and Sunday weekly, 1st monthly) backups; 3 unless set',
  }),
  retention_days: z.object({ daily: days, weekly: days, monthly: days, manual: days }),
  drill_schedule: drillSchedule,
});
export type BackupSettings = z.output<typeof settings>;
export const settingsBody = settings
  .extend({ drill_schedule: drillSchedule.optional(), schedule_hour_utc: settings.shape.schedule_hour_utc.optional() })
  .meta({ id: 'BackupSettingsUpdate' });
export type BackupSettingsUpdate = z.input<typeof settingsBody>;
