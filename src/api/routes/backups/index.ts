// Backups (CONTRACT.md "Backups and storage"): thin handlers over src/domain/backups.
import { z } from 'zod';
import { deleteBackup } from '../../../domain/backups/delete.ts';
import { openDecrypted } from '../../../domain/backups/download.ts';
import { requestDrill } from '../../../domain/backups/drill.ts';
import { backupQueries } from '../../../domain/backups/queries.ts';
import {
  backupUsage,
  getBackup,
  getOperation,
  getSettings,
  previewRestore,
  requestManualBackup,
  requestRestore,
  saveSettings,
} from '../../../domain/backups/service.ts';
import { defineRoute } from '../../../http/route.ts';
import { paginate } from '../../../contract/pages.ts';
import {
  backup,
  backupIdParams,
  backupList,
  backupPages,
  backupResource,
  createBackupBody,
  drillBody,
  envParams,
  operationResource,
  pageQuery,
  operation,
  operationParams,
  restoreBody,
  restorePreview,
  settings,
  settingsBody,
  usage,
} from '../../../contract/backups.ts';

const envBase = '/v1/orgs/{org}/projects/{project}/envs/{env}';

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

export const downloadBackup = defineRoute({
  method: 'get',
  path: '/v1/backups/{backup_id}:download',
  operationId: 'downloadBackup',
  summary: 'The decrypted .sql.gz (application/gzip), streamed',
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:read',
  params: backupIdParams,
  response: {
    status: 200,
    description: 'The gzip-compressed SQL dump',
    schema: z.unknown().meta({ description: 'application/gzip bytes' }),
  },
  async handle({ principal, deps, params, ctx }) {
    const b = await getBackup(deps.db, principal.envId, params.backup_id);
    const { body, length } = await openDecrypted(deps, b);
    ctx.type = 'application/gzip';
    ctx.attachment(`${b.id}.sql.gz`);
    if (length !== undefined) ctx.length = length;
    ctx.body = body;
    return undefined;
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

export const restoreBackup = defineRoute({
  method: 'post',
  path: '/v1/backups/{backup_id}/restore',
  operationId: 'restoreBackup',
  summary: "Replace targetEnv's database with this backup (takes a pre-restore backup first)",
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:write',
  params: backupIdParams,
  body: restoreBody,
  response: { status: 202, description: 'The restore operation; poll GET /v1/operations/{id}', schema: operation },
  async handle({ principal, deps, params, body }) {
    const { op, targetName } = await requestRestore(deps, principal.envId, params.backup_id, body.targetEnv);
    return operationResource(op, targetName);
  },
});

export const previewRestoreRoute = defineRoute({
  method: 'post',
  path: '/v1/backups/{backup_id}:previewRestore',
  operationId: 'previewRestore',
  summary: 'The checks of a restore, and what it would replace, without restoring (validate only)',
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:write',
  params: backupIdParams,
  body: restoreBody,
  response: { status: 200, description: 'What the restore would replace', schema: restorePreview },
  async handle({ principal, deps, params, body }) {
    const preview = await previewRestore(deps, principal.envId, params.backup_id, body.targetEnv);
    return { ...preview, backup: backupResource(preview.backup) };
  },
});

export const drillRoute = defineRoute({
  method: 'post',
  path: `${envBase}/backups:drill`,
  operationId: 'drillBackup',
  summary:
    "Restore the latest succeeded backup into a scratch database now, and compare every table with the backup's record",
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:write',
  params: envParams,
  body: drillBody,
  response: { status: 202, description: 'The drill operation; poll GET /v1/operations/{id}', schema: operation },
  async handle({ principal, deps }) {
    const { op, targetName } = await requestDrill(deps, principal.envId);
    return operationResource(op, targetName);
  },
});

export const getOperationRoute = defineRoute({
  method: 'get',
  path: '/v1/operations/{operation_id}',
  operationId: 'getOperation',
  summary: 'A long-running operation (restore), with its progress',
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:read',
  params: operationParams,
  response: { status: 200, description: 'The operation', schema: operation },
  async handle({ principal, deps, params }) {
    const { op, targetName, verification } = await getOperation(deps.db, principal.envId, params.operation_id);
    return operationResource(op, targetName, verification);
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

// The download route comes before the plain get so `…:download` is not read as an id.
export const backupRoutes = [
  createBackup,
  drillRoute,
  listBackupsRoute,
  downloadBackup,
  getBackupRoute,
  deleteBackupRoute,
  restoreBackup,
  previewRestoreRoute,
  getOperationRoute,
  getUsage,
  getBackupSettings,
  putBackupSettings,
];
