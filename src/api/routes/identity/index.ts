// Every identity route: the client API and the secret-key end-user routes.
import type { RouteDef } from '../../../http/route.ts';
import { clientRoutes } from './client.ts';
import { getClientConfig } from './config.ts';
import { endUserRoutes } from './end-users.ts';
import { factorRoutes } from './factors.ts';
import { getIdentitySettings, putIdentitySettings } from './settings.ts';

export const identityRoutes: readonly RouteDef[] = [
  getClientConfig,
  ...clientRoutes,
  ...factorRoutes,
  ...endUserRoutes,
  getIdentitySettings,
  putIdentitySettings,
];
