// The app: the API, the Account Portal and the console, mounted on the route kernel with the
// feature code's hooks (hooks.ts). createApp(deps): the middleware order, visible in one place.
import Router from '@koa/router';
import Koa from 'koa';
import type { AppDeps } from '../http/context.ts';
import { cors } from '../http/middleware/cors.ts';
import { errorHandler } from '../http/middleware/errors.ts';
import { httpsOnly } from '../http/middleware/https-only.ts';
import { requestContext } from '../http/middleware/request.ts';
import { createMetrics } from './metrics.ts';
import { buildOpenApi } from '../http/openapi.ts';
import { mountRoutes, type RouteDef } from '../http/route.ts';
import { apiRoutes } from '../api/routes/index.ts';
import { consoleRoutes } from '../console/index.ts';
import { portalRoutes } from '../portal/index.ts';
import { kernelHooks } from './hooks.ts';
import { healthz, readyz } from '../api/routes/system/index.ts';

/** Every route of the service, on one router and in the OpenAPI document. */
export const allRoutes: readonly RouteDef[] = [...apiRoutes, ...portalRoutes, ...consoleRoutes];

export interface AppOptions {
  /** Extra routes (tests mount probes for the key middleware this way). */
  routes?: readonly RouteDef[];
  /**
   * Check every answer against its route's response schema (route.ts); on when NODE_ENV is `test`
   * (vitest sets it, and spawned web processes inherit it), so every API test also checks the
   * contract it reads.
   */
  checkResponses?: boolean;
}

export function createApp(deps: AppDeps, options: AppOptions = {}): Koa {
  // The client's address is the X-Forwarded-For entry CAIRN_TRUSTED_PROXY_HOPS from the right:
  // each trusted proxy appends the address it was reached from (Heroku's router appends the
  // client's as the last entry), while every entry left of those is whatever the client wrote.
  // Koa's maxIpsCount keeps exactly the last `hops` entries and ctx.ips[0] is the first of them;
  // with 0 hops no header is trusted. Every per-address limit keys on clientAddress
  // (src/http/client.ts), which takes that entry only when it is an IP address, else the socket's.
  // X-Forwarded-Proto (https-only.ts) and -Host are trusted only with a proxy in front, likewise.
  const hops = deps.config.CAIRN_TRUSTED_PROXY_HOPS;
  const app = new Koa({ proxy: hops > 0, maxIpsCount: hops });
  app.silent = true; // errors are logged by errorHandler, with the request id
  const routes = [healthz, readyz, ...allRoutes, ...(options.routes ?? [])];
  let openApi: unknown;

  const metrics = createMetrics(deps);
  const router = new Router();
  router.get('/metrics', metrics.route);
  router.get('/v1/openapi.json', (ctx) => {
    ctx.body = openApi ??= buildOpenApi(routes, deps.config.CAIRN_BASE_URL);
  });
  mountRoutes(router, routes, deps, {
    checkResponses: options.checkResponses ?? process.env.NODE_ENV === 'test',
    hooks: kernelHooks,
  });

  app.use(metrics.timer);
  app.use(requestContext(deps.log));
  app.use(errorHandler());
  app.use(async (ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Cache-Control', 'no-store');
    await next();
  });
  app.use(httpsOnly(deps.config, deps.log));
  app.use(cors());
  // One router for everything: /v1, OAuth, the social callback and the Account Portal's pages.
  app.use(router.routes());
  return app;
}
