// Liveness and readiness for the platform's router and health checks: /healthz answers while the
// process is up; /readyz only when Postgres answers and every migration has run. /readyz's body
// also counts backups whose latest restore drill failed: not a reason to take the process out
// of rotation, but where an operator's monitoring already looks. Only a count: the route is
// public, and which backup failed and why is for the key holders (GET …/backups).
import type { Middleware } from 'koa';
import type { AppDeps } from '../../../http/context.ts';
import { isStoreUnavailable } from '../../../app-error.ts';
import { backupQueries } from '../../../domain/backups/queries.ts';

export function healthz(): Middleware {
  return (ctx) => {
    ctx.body = { status: 'ok' };
  };
}

type Readiness = { status: number; body: object };

/** /readyz answers within a second: the platform's check times out, and a slow answer is a "no" too. */
export const readyzBoundMs = 500;
export function readyz(deps: AppDeps): Middleware {
  // One probe at a time: checks that come while it runs share its answer, so checks during an
  // outage hold one connection at most (until the probe's statement times out: db-timeouts.ts).
  let inFlight: Promise<Readiness> | undefined;
  return async (ctx) => {
    inFlight ??= probe(deps).finally(() => (inFlight = undefined));
    const { status, body } = await within(inFlight, readyzBoundMs);
    ctx.status = status;
    if (body === unavailable.body) ctx.set('Retry-After', '5');
    ctx.body = body;
  };
}

const unavailable: Readiness = { status: 503, body: { status: 'database_unavailable' } };

/** The probe's answer, or database_unavailable when it has none within `ms` (it goes on, bounded by db-timeouts.ts). */
async function within(answer: Promise<Readiness>, ms: number): Promise<Readiness> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Readiness>((resolve) => (timer = setTimeout(() => resolve(unavailable), ms)));
  try {
    return await Promise.race([answer, late]);
  } finally {
    clearTimeout(timer);
  }
}

async function probe(deps: AppDeps): Promise<Readiness> {
  try {
    const [, pending] = (await deps.db.migrate.list()) as [unknown[], unknown[]];
    if (pending.length > 0)
      return {
        status: 503,
        body: { status: 'migrations_pending', pending: pending.length, hint: 'run the release phase: npm run migrate' },
      };
    const failed = await backupQueries(deps.db).countFailedDrills();
    return {
      status: 200,
      body: {
        status: 'ready',
        backup_drills: {
          failed,
          ...(failed > 0
            ? { hint: 'a restore drill failed: see "verification" in GET …/envs/{env}/backups or `cairn backups list`' }
            : {}),
        },
      },
    };
  } catch (err) {
    if (!isStoreUnavailable(err)) throw err;
    return unavailable;
  }
}
