// Backups themselves: take one, list, get, delete, and the day's usage.
import { z } from 'zod';
import { deleteBackup } from '../../../domain/backups/capture/delete.ts';
import { backupUsage, getBackup, requestManualBackup } from '../../../domain/backups/capture/request.ts';
import { backupQueries } from '../../../domain/backups/queries.ts';
import { defineRoute } from '../../../http/route.ts';
import { paginate } from '../../../http/paginate.ts';
import {
  backup,
  backupIdParams,
  backupList,
  createBackupBody,
  envParams,
  pageQuery,
  usage,
} from '../../../contract/backups.ts';
import { backupPages, backupResource } from '../../../domain/backups/present.ts';

export const envBase = '/v1/orgs/{org}/projects/{project}/envs/{env}';

export const createBackup = defineRoute({
  method: 'post',
  path: `${envBase}/backups`,
  operationId: 'createBackup',
  summary: 'Take a manual backup (free up to 10 a day, then billable)',
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:write',
  params: envParams,
  body: createBackupBody,
  response: { status: 202, description: 'The backup, pending', schema: backup },
  async handle({ principal, deps }) {
    return backupResource(await requestManualBackup(deps, principal.envId));
  },
});

export const listBackupsRoute = defineRoute({
  method: 'get',
  path: `${envBase}/backups`,
  operationId: 'listBackups',
  summary: 'Backups of the environment, newest first',
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:read',
  params: envParams,
  query: pageQuery,
  response: { status: 200, description: 'A page of backups', schema: backupList },
  async handle({ principal, deps, query }) {
    const page = await paginate(deps.config, query, backupPages, (after, limit) =>
      backupQueries(deps.db).listBackups(principal.envId, limit, after),
    );
    return { backups: page.items.map(backupResource), next_page_token: page.next_page_token };
  },
});

export const getBackupRoute = defineRoute({
  method: 'get',
  path: '/v1/backups/{backup_id}',
  operationId: 'getBackup',
  summary: 'One backup',
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:read',
  params: backupIdParams,
  response: { status: 200, description: 'The backup', schema: backup },
  async handle({ principal, deps, params }) {
    return backupResource(await getBackup(deps.db, principal.envId, params.backup_id));
  },
});

export const deleteBackupRoute = defineRoute({
  method: 'delete',
  path: '/v1/backups/{backup_id}',
  operationId: 'deleteBackup',
  summary: 'Delete a backup that has ended: its stored object and its record',
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:write',
  params: backupIdParams,
  response: { status: 204, description: 'Deleted', schema: z.undefined(), type: 'empty' },
  async handle({ principal, deps, params }) {
    await deleteBackup(deps, principal.envId, params.backup_id);
    return undefined;
  },
});

export const getUsage = defineRoute({
  method: 'get',
  path: `${envBase}/backup_usage`,
  operationId: 'getBackupUsage',
  summary: 'Manual backups today, free left, stored GB and the monthly estimate',
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:read',
  params: envParams,
  response: { status: 200, description: 'Usage', schema: usage },
  async handle({ principal, deps }) {
    return backupUsage(deps.db, principal.envId);
  },
});
