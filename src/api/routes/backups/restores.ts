// Restores and drills, and the operations that report on them.
import { requestDrill } from '../../../domain/backups/drills/request.ts';
import { getOperation, previewRestore, requestRestore } from '../../../domain/backups/restore/request.ts';
import { defineRoute } from '../../../http/route.ts';
import { drillBody, operation, operationParams, restoreBody, restorePreview } from '../../../contract/backups.ts';
import { backupResource, operationResource } from '../../../domain/backups/present.ts';
import { onBackup, onEnv, read, write } from './parts.ts';

/** A restore and its preview both read the backup from the path and the target from the body. */
const restoreOf = (suffix: string, operationId: string) => ({
  ...onBackup('post', suffix, write, operationId),
  body: restoreBody,
});

export const restoreBackup = defineRoute({
  ...restoreOf('/restore', 'restoreBackup'),
  summary: "Replace targetEnv's database with this backup (takes a pre-restore backup first)",
  example: { targetEnv: 'orgs/acme/projects/shop/envs/staging' },
  response: { status: 202, description: 'The restore operation; poll GET /v1/operations/{id}', schema: operation },
  async handle({ principal, deps, params, body }) {
    const { op, targetName } = await requestRestore(deps, principal.envId, params.backup_id, body.targetEnv);
    return operationResource(op, targetName);
  },
});

export const previewRestoreRoute = defineRoute({
  ...restoreOf(':previewRestore', 'previewRestore'),
  summary: 'The checks of a restore, and what it would replace, without restoring (validate only)',
  example: { targetEnv: 'orgs/acme/projects/shop/envs/staging' },
  response: { status: 200, description: 'What the restore would replace', schema: restorePreview },
  async handle({ principal, deps, params, body }) {
    const preview = await previewRestore(deps, principal.envId, params.backup_id, body.targetEnv);
    return { ...preview, backup: backupResource(preview.backup) };
  },
});

export const drillRoute = defineRoute({
  ...onEnv('post', '/backups:drill', write, 'drillBackup'),
  summary:
    "Restore the latest succeeded backup into a scratch database now, and compare every table with the backup's record",
  body: drillBody,
  example: {},
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
  ...read,
  params: operationParams,
  response: { status: 200, description: 'The operation', schema: operation },
  async handle({ principal, deps, params }) {
    const { op, targetName, verification } = await getOperation(deps.db, principal.envId, params.operation_id);
    return operationResource(op, targetName, verification);
  },
});
