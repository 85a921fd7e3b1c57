// Backups themselves: take one, list, get, delete, and the day's usage.
import { z } from 'zod';
import { deleteBackup } from '../../../domain/backups/capture/delete.ts';
import { backupUsage, getBackup, requestManualBackup } from '../../../domain/backups/capture/request.ts';
import { backupQueries } from '../../../domain/backups/queries.ts';
import { defineRoute } from '../../../http/route.ts';
import { listRoute } from '../route-parts.ts';
import { onBackup, onEnv, read, write } from './parts.ts';
import { backup, backupList, createBackupBody, usage } from '../../../contract/backups.ts';
import { backupPages, backupResource } from '../../../domain/backups/present.ts';

export const createBackup = defineRoute({
  ...onEnv('post', '/backups', write, 'createBackup'),
  summary: 'Take a manual backup (free up to 10 a day, then billable)',
  body: createBackupBody,
  example: { type: 'manual' },
  response: { status: 202, description: 'The backup, pending', schema: backup },
  async handle({ principal, deps }) {
    return backupResource(await requestManualBackup(deps, principal.envId));
  },
});

export const listBackupsRoute = listRoute(onEnv('get', '/backups', read, 'listBackups'), {
  summary: 'Backups of the environment, newest first',
  collection: 'backups',
  response: { description: 'A page of backups', schema: backupList },
  keyset: backupPages,
  present: backupResource,
  fetch: ({ deps, principal }, after, limit) => backupQueries(deps.db).listBackups(principal.envId, limit, after),
});

export const getBackupRoute = defineRoute({
  ...onBackup('get', '', read, 'getBackup'),
  summary: 'One backup',
  response: { status: 200, description: 'The backup', schema: backup },
  async handle({ principal, deps, params }) {
    return backupResource(await getBackup(deps.db, principal.envId, params.backup_id));
  },
});

export const deleteBackupRoute = defineRoute({
  ...onBackup('delete', '', write, 'deleteBackup'),
  summary: 'Delete a backup that has ended: its stored object and its record',
  response: { status: 204, description: 'Deleted', schema: z.undefined(), type: 'empty' },
  async handle({ principal, deps, params }) {
    await deleteBackup(deps, principal.envId, params.backup_id);
    return undefined;
  },
});

export const getUsage = defineRoute({
  ...onEnv('get', '/backup_usage', read, 'getBackupUsage'),
  summary: 'Manual backups today, free left, stored GB and the monthly estimate',
  response: { status: 200, description: 'Usage', schema: usage },
  async handle({ principal, deps }) {
    return backupUsage(deps.db, principal.envId);
  },
});
