// Schedule, retention and drill settings of an environment's backups.
import { getSettings, saveSettings } from '../../../domain/backups/schedule/settings.ts';
import { defineRoute } from '../../../http/route.ts';
import { settings, settingsBody } from '../../../contract/backups.ts';
import { onEnv, read, write } from './parts.ts';

export const getBackupSettings = defineRoute({
  ...onEnv('get', '/backup_settings', read, 'getBackupSettings'),
  summary: "Schedule and retention of the environment's backups",
  response: { status: 200, description: 'Settings', schema: settings },
  async handle({ principal, deps }) {
    return getSettings(deps.db, principal.envId);
  },
});

export const putBackupSettings = defineRoute({
  ...onEnv('put', '/backup_settings', write, 'updateBackupSettings'),
  summary: 'Change schedule and retention (applies to existing backups too)',
  body: settingsBody,
  example: {
    schedule_enabled: true,
    schedule_hour_utc: 3,
    retention_days: { daily: 7, weekly: 28, monthly: 365, manual: 30 },
    drill_schedule: 'weekly',
  },
  response: { status: 200, description: 'Settings', schema: settings },
  async handle({ principal, deps, body }) {
    return saveSettings(deps.db, principal.envId, body);
  },
});
