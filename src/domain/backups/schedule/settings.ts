// Schedule, retention and drill settings, as the API reads and writes them.
import type { Knex } from 'knex';
import { AppError } from '../../../app-error.ts';
import { backupQueries, type BackupSettings, type DrillSchedule, type EnvTarget } from '../queries.ts';
import { settingsQueries } from './queries.ts';

/** Drills default to weekly in test environments and off in live ones (drills/drill.ts). */
export function effectiveDrillSchedule(mode: EnvTarget['mode'], setting: DrillSchedule | null): DrillSchedule {
  return setting ?? (mode === 'live' ? 'off' : 'weekly');
}

/** The settings as they apply: an unset drill schedule shows the mode's default. */
export async function getSettings(
  db: Knex,
  envId: string,
): Promise<Omit<BackupSettings, 'drill_schedule'> & { drill_schedule: DrillSchedule }> {
  const q = backupQueries(db);
  const [settings, env] = await Promise.all([q.settings(envId), q.envTarget(envId)]);
  if (!env) throw new AppError('not_found', 'the environment no longer exists');
  return { ...settings, drill_schedule: effectiveDrillSchedule(env.mode, settings.drill_schedule) };
}

/** PUT replaces schedule and retention; a body without `drill_schedule` or `schedule_hour_utc` keeps the current one. */
export async function saveSettings(
  db: Knex,
  envId: string,
  settings: Omit<BackupSettings, 'drill_schedule' | 'schedule_hour_utc'> & {
    drill_schedule?: DrillSchedule | undefined;
    schedule_hour_utc?: number | undefined;
  },
) {
  await db.transaction(async (trx) => {
    const q = backupQueries(trx);
    const current = await q.settings(envId);
    await settingsQueries(trx).saveSettings(envId, {
      ...settings,
      drill_schedule: settings.drill_schedule ?? current.drill_schedule,
      schedule_hour_utc: settings.schedule_hour_utc ?? current.schedule_hour_utc,
    });
  });
  return getSettings(db, envId);
}
