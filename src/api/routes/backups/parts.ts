// What the backup routes declare alike: their tag and scopes, and the two things a route acts on
// (an environment, or one backup or operation named in the path).
import type { Method } from '../../../http/route.ts';
import { backupIdParams, envParams } from '../../../contract/backups.ts';
import { envPath } from '../resource.ts';
import { secretKey } from '../route-parts.ts';

export const read = secretKey('Backups', 'backups:read');
export const write = secretKey('Backups', 'backups:write');
type Access = typeof read | typeof write;

/** A route on an environment: its method, what follows the environment's path, who may call it, its id. */
export const onEnv = (method: Method, suffix: string, access: Access, operationId: string) => ({
  method,
  operationId,
  path: `${envPath}${suffix}`,
  ...access,
  params: envParams,
});

/** A route on one backup: its method, what follows the backup's path, who may call it, its id. */
export const onBackup = (method: Method, suffix: string, access: Access, operationId: string) => ({
  method,
  operationId,
  path: `/v1/backups/{backup_id}${suffix}`,
  ...access,
  params: backupIdParams,
});
