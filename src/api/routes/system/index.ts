// Liveness and readiness for the platform's router and health checks: /healthz answers while the
// process is up; /readyz only when Postgres answers and every migration has run. /readyz's body
// also counts backups whose latest restore drill failed: not a reason to take the process out
// of rotation, but where an operator's monitoring already looks. Only a count: the route is
// public, and which backup failed and why is for the key holders (GET …/backups).
import type { Middleware } from 'koa';
import type { AppDeps } from '../../../http/context.ts';
import { isStoreUnavailable } from '../../../errors.ts';
import { backupQueries } from '../../../domain/backups/queries.ts';

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
        ctx.body = {
          status: 'migrations_pending',
          pending: pending.length,
          hint: 'run the release phase: npm run migrate',
        };
        return;
      }
      const failed = await backupQueries(deps.db).countFailedDrills();
      ctx.body = {
        status: 'ready',
        backup_drills: {
          failed,
          ...(failed > 0
            ? { hint: 'a restore drill failed: see "verification" in GET …/envs/{env}/backups or `cairn backups list`' }
            : {}),
        },
      };
    } catch (err) {
      if (!isStoreUnavailable(err)) throw err;
      ctx.status = 503;
      ctx.set('Retry-After', '5');
      ctx.body = { status: 'database_unavailable' };
    }
  };
}
