// Liveness and readiness for the platform's router and health checks: /healthz answers while the
// process is up; /readyz only when Postgres answers and every migration has run.
import type { Middleware } from 'koa';
import type { AppDeps } from '../../context.ts';
import { isStoreUnavailable } from '../../../errors.ts';

export function healthz(): Middleware {
  return (ctx) => {
    ctx.body = { status: 'ok' };
  };
}

export function readyz(deps: AppDeps): Middleware {
  return async (ctx) => {
    try {
      const [, pending] = (await deps.db.migrate.list()) as [unknown[], unknown[]];
      if (pending.length > 0) {
        ctx.status = 503;
        ctx.body = { status: 'migrations_pending', pending: pending.length, hint: 'run the release phase: npm run migrate' };
        return;
      }
      ctx.body = { status: 'ready' };
    } catch (err) {
      if (!isStoreUnavailable(err)) throw err;
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = { status: 'database_unavailable' };
    }
  };
}
