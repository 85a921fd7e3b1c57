// CORS for the browser-facing routes (/v1/client/*, /v1/oauth/*, and the Sentry ingest routes
// /api/{n}/envelope|store/ that browser SDKs post to from the application's pages). These routes never rely on
// ambient credentials (cookies): a page sends the publishable key or a session bearer in a header.
// So any origin may call them, and we never send Access-Control-Allow-Credentials (Fetch standard,
// "CORS protocol and credentials"). Server routes get no CORS headers: browsers cannot call them.
import type { Middleware } from 'koa';

const browserRoutes = /^\/v1\/(client|oauth)\//;
const sentryRoutes = /^\/api\/[0-9]+\/(envelope|store)\/?$/;

export function cors(): Middleware {
  return async (ctx, next) => {
    const origin = ctx.get('origin');
    const sentry = sentryRoutes.test(ctx.path);
    if (!origin || !(sentry || browserRoutes.test(ctx.path))) return next();
    ctx.vary('Origin');
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.set(
      'Access-Control-Expose-Headers',
      sentry ? 'X-Request-Id, Retry-After, X-Sentry-Rate-Limits' : 'X-Request-Id, Retry-After',
    );
    if (ctx.method === 'OPTIONS' && ctx.get('access-control-request-method')) {
      ctx.set('Access-Control-Allow-Methods', sentry ? 'POST' : 'GET, POST');
      ctx.set(
        'Access-Control-Allow-Headers',
        sentry ? 'Content-Type, X-Sentry-Auth' : 'Authorization, Content-Type, Cairn-Publishable-Key',
      );
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    return next();
  };
}
