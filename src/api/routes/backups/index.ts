// Backups (docs/api.md "Backups and storage"): thin handlers over src/domain/backups.
import type { Context } from 'koa';
import { z } from 'zod';
import { deleteBackup } from '../../../domain/backups/delete.ts';
import {
  defaultLinkSeconds,
  keyMayRead,
  linkValid,
  maxLinkSeconds,
  signDownload,
} from '../../../domain/backups/download-links.ts';
import { openDecrypted, openSealed } from '../../../domain/backups/download.ts';
import { requestDrill } from '../../../domain/backups/drill.ts';
import { backupQueries, type BackupRow } from '../../../domain/backups/queries.ts';
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
import { AppError } from '../../../app-error.ts';
import type { AppDeps } from '../../../http/context.ts';
import { defineRoute } from '../../../http/route.ts';
import { paginate } from '../../../http/paginate.ts';
import {
  backup,
  backupIdParams,
  backupList,
  createBackupBody,
  drillBody,
  envParams,
  pageQuery,
  operation,
  operationParams,
  restoreBody,
  restorePreview,
  settings,
  settingsBody,
  usage,
} from '../../../contract/backups.ts';
import { backupPages, backupResource, operationResource } from '../../../domain/backups/present.ts';

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

/** The decrypted .sql.gz as the answer, streamed (the keyed download and the link's). */
async function sendDecrypted(ctx: Context, deps: AppDeps, b: BackupRow): Promise<void> {
  const { body, length } = await openDecrypted(deps, b);
  ctx.type = 'application/gzip';
  ctx.attachment(`${b.id}.sql.gz`);
  if (length !== undefined) ctx.length = length;
  ctx.body = body;
}

export const downloadBackup = defineRoute({
  method: 'get',
  path: '/v1/backups/{backup_id}:download',
  operationId: 'downloadBackup',
  summary: 'The decrypted .sql.gz (application/gzip), streamed; with sealed=true the stored object as it is',
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:read',
  params: backupIdParams,
  query: z.object({
    sealed: z.enum(['true', 'false']).optional().meta({
      description:
        'true: the encrypted object (cairn-bk1) and, in the Cairn-Sealed-Key header, its data key sealed by the service key, for `cairn backups decrypt` offline',
    }),
  }),
  response: {
    status: 200,
    description: 'The gzip-compressed SQL dump',
    schema: z.unknown().meta({ description: 'application/gzip bytes' }),
  },
  async handle({ principal, deps, params, query, ctx }) {
    const b = await getBackup(deps.db, principal.envId, params.backup_id);
    if (query.sealed === 'true') {
      const sealed = await openSealed(deps, b);
      ctx.type = 'application/octet-stream';
      ctx.attachment(`${b.id}.cairnbk`);
      ctx.set('cairn-sealed-key', Buffer.from(JSON.stringify(sealed.key)).toString('base64url'));
      if (sealed.length !== undefined) ctx.length = sealed.length;
      ctx.body = sealed.body;
      return undefined;
    }
    await sendDecrypted(ctx, deps, b);
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

export const backupUrlRoute = defineRoute({
  method: 'post',
  path: '/v1/backups/{backup_id}:url',
  operationId: 'backupUrl',
  summary: 'An expiring link to the decrypted .sql.gz that needs no key (for curl, CI, another host)',
  tags: ['Backups'],
  auth: 'secret',
  scope: 'backups:read',
  params: backupIdParams,
  body: z
    .strictObject({
      expires_in_seconds: z.number().int().min(60).max(maxLinkSeconds).default(defaultLinkSeconds),
    })
    .optional(),
  response: {
    status: 200,
    description: 'The link and when it stops working',
    schema: z.object({ url: z.string(), expire_time: z.string() }),
  },
  async handle({ principal, deps, params, body }) {
    const b = await getBackup(deps.db, principal.envId, params.backup_id);
    if (b.state !== 'succeeded')
      throw new AppError('INVALID_STATE', `backup ${b.id} is ${b.state}: only a succeeded backup can be downloaded`, {
        details: { state: b.state },
      });
    const expires = Math.floor(Date.now() / 1000) + (body?.expires_in_seconds ?? defaultLinkSeconds);
    const link = signDownload(deps.config, b.id, expires, principal.keyId);
    const query = new URLSearchParams({ expires: String(link.expires), key: link.key, signature: link.signature });
    return {
      url: `${deps.config.CAIRN_BASE_URL}/v1/backups/${b.id}:signedDownload?${query}`,
      expire_time: new Date(expires * 1000).toISOString(),
    };
  },
});

export const signedDownloadRoute = defineRoute({
  method: 'get',
  path: '/v1/backups/{backup_id}:signedDownload',
  operationId: 'signedDownloadBackup',
  summary: 'The decrypted .sql.gz through a link from :url (no key; the link is the credential)',
  tags: ['Backups'],
  auth: 'none',
  params: backupIdParams,
  query: z.object({ expires: z.coerce.number().int(), key: z.string().max(64), signature: z.string().max(100) }),
  response: {
    status: 200,
    description: 'The gzip-compressed SQL dump',
    schema: z.unknown().meta({ description: 'application/gzip bytes' }),
  },
  async handle({ deps, params, query, ctx }) {
    // Checked before the database is asked anything: a guessed link costs one HMAC.
    const refused = () =>
      new AppError(
        'forbidden',
        'this download link is not valid or has expired; make a new one with cairn backups url <id>',
      );
    if (!linkValid(deps.config, params.backup_id, query)) throw refused();
    const b = await backupQueries(deps.db).backup(params.backup_id);
    if (!b || b.state !== 'succeeded') throw new AppError('not_found', `backup ${params.backup_id} no longer exists`);
    // The key that asked for the link must still be allowed to read this backup.
    if (!(await keyMayRead(deps.db, query.key, b.env_id))) throw refused();
    await sendDecrypted(ctx, deps, b);
    return undefined;
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
  // Before getBackupRoute: its {backup_id} would also match `backup_…:signedDownload`.
  signedDownloadRoute,
  backupUrlRoute,
  getBackupRoute,
  deleteBackupRoute,
  restoreBackup,
  previewRestoreRoute,
  getOperationRoute,
  getUsage,
  getBackupSettings,
  putBackupSettings,
];
