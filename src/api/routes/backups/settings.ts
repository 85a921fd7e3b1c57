// Schedule, retention and drill settings of an environment's backups.
import { getSettings, saveSettings } from '../../../domain/backups/schedule/settings.ts';
import { defineRoute } from '../../../http/route.ts';
import { envParams, settings, settingsBody } from '../../../contract/backups.ts';
import { envBase } from './backups.ts';

export const getBackupSettings = defineRoute({
  method: 'get',
  path: `${envBase}/backup_settings`,
  operationId: 'getBackupSettings',
  summary: "Schedule and retention of the environment's backups",
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:read',
  params: envParams,
  response: { status: 200, description: 'Settings', schema: settings },
  async handle({ principal, deps }) {
    return getSettings(deps.db, principal.envId);
  },
});

export const putBackupSettings = defineRoute({
  method: 'put',
  path: `${envBase}/backup_settings`,
  operationId: 'updateBackupSettings',
  summary: 'Change schedule and retention (applies to existing backups too)',
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:write',
  params: envParams,
  body: settingsBody,
  response: { status: 200, description: 'Settings', schema: settings },
  async handle({ principal, deps, body }) {
    return saveSettings(deps.db, principal.envId, body);
  },
});
