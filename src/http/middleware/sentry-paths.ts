// Sentry's ingest paths answer with or without their trailing slash, as Sentry's own do (SDKs and
// tunnels differ): `/api/{n}/envelope` is read as `/api/{n}/envelope/` before routing.
import type { Middleware } from 'koa';

const bare = /^\/api\/[0-9]+\/(?:envelope|store)$/;

export function sentryPaths(): Middleware {
  return async (ctx, next) => {
    if (bare.test(ctx.path)) ctx.path = `${ctx.path}/`;
    await next();
  };
}
