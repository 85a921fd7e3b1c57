// Every route of the API, in one list: the /v1 API, the OAuth endpoints, the social callback and
// Sentry's ingest. The app (src/app/) mounts it beside the Account Portal's and the console's.
import type { RouteDef } from '../../http/route.ts';
import { alertRoutes } from './alerts/index.ts';
import { backupRoutes } from './backups/index.ts';
import { errorGroupRoutes } from './errors/index.ts';
import { identityRoutes } from './identity/index.ts';
import { oauthRoutes } from './oauth/index.ts';
import { callbackRoutes } from './social/callback.ts';
import { sentryRoutes } from './sentry/index.ts';
import { socialRoutes } from './social/index.ts';
import { storageRoutes } from './storage/index.ts';
import { tenancyRoutes } from './tenancy/index.ts';
import { webhookRoutes } from './webhooks/index.ts';

export const apiRoutes: readonly RouteDef[] = [
  ...tenancyRoutes,
  ...identityRoutes,
  ...socialRoutes,
  ...errorGroupRoutes,
  ...backupRoutes,
  ...storageRoutes,
  ...webhookRoutes,
  ...alertRoutes,
  ...oauthRoutes,
  ...callbackRoutes,
  ...sentryRoutes,
];
