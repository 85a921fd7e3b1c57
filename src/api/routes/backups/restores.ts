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
  description:
    '`targetEnv` must be named in full, so a restore cannot land on an environment by mistake; a live target takes a key of a live environment. A worker backs the target up first, then replays the dump in one transaction, refusing an incomplete script. Poll the operation for its progress and outcome.',
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
  description:
    "Runs every check a restore runs and lists the tables it would replace with their rows (exact for small tables, the planner's estimate otherwise, or unknown), changing nothing.",
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
  description:
    'A worker restores the backup into a scratch database, compares its rows and catalog (owners, grants, definitions) with what the backup recorded, and drops the scratch database; the operation carries the verdict. Needs a role with CREATEDB on the target server.',
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
  description:
    'A restore or a drill: its state (`running`, `succeeded`, `failed`), its progress while it runs, and, for a drill, its verification. An operation of another environment answers 404.',
  ...read,
  params: operationParams,
  response: { status: 200, description: 'The operation', schema: operation },
  async handle({ principal, deps, params }) {
    const { op, targetName, verification } = await getOperation(deps.db, principal.envId, params.operation_id);
    return operationResource(op, targetName, verification);
  },
});
