// GET /metrics: Prometheus text (prom-client) for the operator's scraper, behind
// `Authorization: Bearer $CAIRN_METRICS_TOKEN` (unset: no route, 404). The pipeline's gauges are
// read from Postgres at scrape time, so every web process answers the same figures; the HTTP
// latency histogram and process metrics are this process's own (a scraper sums them across
// dynos), or, under WEB_CONCURRENCY, summed over the dyno's processes (web-cluster.ts). Routes are
// labelled by their template (`/v1/orgs/{org}/…`), never the raw path, so labels stay few.
import { timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { readStatus, type OperationalStatus } from '../domain/operations/status.ts';
import { sha256 } from '../crypto.ts';
import { queues } from '../queues.ts';
import type { AppDeps } from '../http/context.ts';
import { clusterMetrics, joinClusterMetrics } from '../web-cluster.ts';

export interface Metrics {
  /** Times every request; mount first. */
  timer: Middleware;
  /** The /metrics route itself. */
  route: Middleware;
}

/** koa-router's `/envs/:env/error_groups\\:capture` as the OpenAPI document writes it: `/envs/{env}/error_groups:capture`. */
export function template(route: string): string {
  return route.replace(/(?<!\\):([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}').replace(/\\:/g, ':');
}

/** The gauges read from Postgres at scrape time (operations/status.ts), registered in `fromDb`. */
function statusGauges(fromDb: Registry) {
  const gauge = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name, help, labelNames, registers: [fromDb] });
  const pending = gauge('cairn_intake_pending', 'Error events accepted and not yet processed');
  const oldest = gauge(
    'cairn_intake_oldest_seconds',
    'Age of the oldest error event accepted and not yet processed (0 when none waits)',
  );
  const envPending = gauge(
    'cairn_env_intake_pending',
    'Error events pending in each of the busiest environments (at most 20), as backpressure counts them',
    ['env'],
  );
  const envMax = gauge(
    'cairn_env_intake_max_pending',
    "The busiest environments' max_pending: captures answer 429 while pending is at or over it",
    ['env'],
  );
  const leased = gauge('cairn_intake_leased', 'Intake rows claimed by a worker whose lease has not run out');
  const dead = gauge('cairn_dead_letters', 'Error events that kept failing and were set aside');
  const queued = gauge('cairn_jobs_queued', 'Jobs waiting in each queue (retries and delayed jobs included)', [
    'queue',
  ]);
  const active = gauge('cairn_jobs_active', 'Jobs running in each queue', ['queue']);
  const failed = gauge('cairn_jobs_failed', 'Failed jobs still retained in each queue', ['queue']);
  const drills = gauge('cairn_backup_drills_failed', 'Succeeded backups whose latest restore drill failed');
  return { pending, oldest, envPending, envMax, leased, dead, queued, active, failed, drills };
}

/** Sets the gauges to one reading of the status. */
function setGauges(g: ReturnType<typeof statusGauges>, s: OperationalStatus): void {
  g.pending.set(s.intake.pending);
  g.oldest.set(s.intake.oldest_seconds);
  g.leased.set(s.intake.leased);
  // Environments that drained leave the scrape (their series go stale) rather than read 0.
  g.envPending.reset();
  g.envMax.reset();
  for (const e of s.environments) {
    g.envPending.set({ env: e.name }, e.pending);
    g.envMax.set({ env: e.name }, e.max_pending);
  }
  g.dead.set(s.dead_letters);
  g.drills.set(s.backup_drills_failed);
  for (const q of s.queues) {
    g.queued.set({ queue: q.name }, q.queued);
    g.active.set({ queue: q.name }, q.active);
    g.failed.set({ queue: q.name }, q.failed);
  }
}

export function createMetrics(deps: AppDeps): Metrics {
  // Per process (summed over a cluster's processes) and read from Postgres (this process's answer).
  const registry = new Registry();
  const fromDb = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'cairn_web_' });
  joinClusterMetrics(registry);
  const duration = new Histogram({
    name: 'cairn_http_request_duration_seconds',
    help: 'HTTP request duration, by method, route template and status class',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const gauges = statusGauges(fromDb);

  const token = deps.config.CAIRN_METRICS_TOKEN;
  const expected = token ? sha256(Buffer.from(token)) : undefined;

  return {
    timer: async (ctx, next) => {
      const end = duration.startTimer();
      try {
        await next();
      } finally {
        const matched = (ctx as { _matchedRoute?: string | RegExp })._matchedRoute;
        end({
          method: ctx.method,
          route: matched === undefined ? 'unmatched' : template(String(matched)),
          status: `${Math.floor(ctx.status / 100)}xx`,
        });
      }
    },
    route: async (ctx) => {
      if (!expected) {
        ctx.status = 404;
        ctx.body = {
          code: 'not_found',
          message: 'metrics are off: set CAIRN_METRICS_TOKEN to turn them on',
          request_id: ctx.state.requestId,
        };
        return;
      }
      const sent = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1];
      if (!sent || !timingSafeEqual(sha256(Buffer.from(sent)), expected)) {
        ctx.status = 401;
        ctx.set('WWW-Authenticate', 'Bearer');
        ctx.body = {
          code: 'unauthorized',
          message: 'send Authorization: Bearer <CAIRN_METRICS_TOKEN>',
          request_id: ctx.state.requestId,
        };
        return;
      }
      const status = await readStatus(deps.db, deps.jobs.boss, Object.keys(queues));
      setGauges(gauges, status);
      ctx.type = registry.contentType;
      ctx.body = `${await (clusterMetrics() ?? registry.metrics())}\n${await fromDb.metrics()}`;
    },
  };
}
