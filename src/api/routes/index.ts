// Every /v1 route, in one list: mounted by the app and described by the OpenAPI document.
import type { RouteDef } from '../../http/route.ts';
import { backupRoutes } from './backups/index.ts';
import { errorGroupRoutes } from './error-groups/index.ts';
import { identityRoutes } from './identity/index.ts';
import { socialRoutes } from './social/index.ts';
import { storageRoutes } from './storage/index.ts';
import { tenancyRoutes } from './tenancy/index.ts';

export const allRoutes: readonly RouteDef[] = [
  ...tenancyRoutes,
  ...identityRoutes,
  ...socialRoutes,
  ...errorGroupRoutes,
  ...backupRoutes,
  ...storageRoutes,
];
