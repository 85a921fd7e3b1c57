// Every route of the service, in one list: mounted by the app on its one router and described by
// the OpenAPI document. The /v1 API, the OAuth endpoints, the social callback, the Account Portal.
import type { RouteDef } from '../../http/route.ts';
import { backupRoutes } from './backups/index.ts';
import { errorGroupRoutes } from './errors/index.ts';
import { identityRoutes } from './identity/index.ts';
import { oauthRoutes } from './oauth/index.ts';
import { portalRoutes } from '../../portal/index.ts';
import { consoleRoutes } from '../../console/index.ts';
import { callbackRoutes } from './social/callback.ts';
import { sentryRoutes } from './sentry/index.ts';
import { socialRoutes } from './social/index.ts';
import { storageRoutes } from './storage/index.ts';
import { tenancyRoutes } from './tenancy/index.ts';
import { webhookRoutes } from './webhooks/index.ts';

export const allRoutes: readonly RouteDef[] = [
  ...tenancyRoutes,
  ...identityRoutes,
  ...socialRoutes,
  ...errorGroupRoutes,
  ...backupRoutes,
  ...storageRoutes,
  ...webhookRoutes,
  ...oauthRoutes,
  ...callbackRoutes,
  ...portalRoutes,
  ...consoleRoutes,
  ...sentryRoutes,
];
