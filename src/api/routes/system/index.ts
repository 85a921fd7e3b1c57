// Liveness and readiness for the platform's router and health checks: /healthz answers while the
// process is up; /readyz only when Postgres answers and every migration has run. /readyz's body
// also counts backups whose latest restore drill failed: not a reason to take the process out
// of rotation, but where an operator's monitoring already looks. Only a count: the route is
// public, and which backup failed and why is for the key holders (GET …/backups). Both are
// declared as routes, so the OpenAPI document describes them; they take no key.
import { z } from 'zod';
import type { AppDeps } from '../../../http/context.ts';
import { isStoreUnavailable } from '../../../app-error.ts';
import { backupQueries } from '../../../domain/backups/queries.ts';
import { defineRoute } from '../../../http/route.ts';

const tags = ['System'];

export const healthz = defineRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'healthz',
  summary: 'Liveness: answers while the web process is up',
  tags,
  auth: 'none',
  response: { status: 200, description: 'The process is up', schema: z.object({ status: z.literal('ok') }) },
  handle: () => ({ status: 'ok' as const }),
});

const readiness = z.union([
  z.object({
    status: z.literal('ready'),
    backup_drills: z.object({ failed: z.number().int(), hint: z.string().optional() }),
  }),
  z.object({ status: z.literal('migrations_pending'), pending: z.number().int(), hint: z.string() }),
  z.object({ status: z.literal('database_unavailable') }),
]);

type Readiness = { status: number; body: z.output<typeof readiness> };

/** /readyz answers within a second: the platform's check times out, and a slow answer is a "no" too. */
export const readyzBoundMs = 500;

// One probe at a time per app: checks that come while it runs share its answer, so checks during
// an outage hold one connection at most (until the probe's statement times out: db-timeouts.ts).
const inFlight = new WeakMap<AppDeps, Promise<Readiness>>();

export const readyz = defineRoute({
  method: 'get',
  path: '/readyz',
  operationId: 'readyz',
  summary: 'Readiness: answers 200 only when Postgres answers and every migration has run',
  tags,
  auth: 'none',
  // Optional: the handler answers itself (its status is the probe's) and returns nothing.
  response: { status: 200, description: 'Ready (503 with the reason otherwise)', schema: readiness.optional() },
  async handle({ deps, ctx }) {
    let probing = inFlight.get(deps);
    if (!probing) {
      probing = probe(deps).finally(() => inFlight.delete(deps));
      inFlight.set(deps, probing);
    }
    const { status, body } = await within(probing, readyzBoundMs);
    // Answered here: the status is the probe's, 503 included.
    ctx.status = status;
    if (body === unavailable.body) ctx.set('Retry-After', '5');
    ctx.body = body;
    return undefined;
  },
});

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
