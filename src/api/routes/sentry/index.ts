// The Sentry ingest routes (docs/api.md "Sentry compatibility"): what every Sentry SDK posts to
// once its DSN points at Cairn. The client key is the SDK's, checked by the route kernel
// (`auth: 'client-key'`) before the body is read; an envelope may name it in its `dsn` header
// instead, checked as soon as that line is read. Errors keep the /v1 body, and a 429 also says
// `X-Sentry-Rate-Limits`, which the SDKs read to back off.
import { z } from 'zod';
import { ingestAnswer } from '../../../contract/sentry.ts';
import { captureDeps } from '../../../domain/errors/intake/capture.ts';
import { ingestEnvelope, ingestStore, type SentryBodyReader } from '../../../domain/errors/sentry/ingest.ts';
import { AppError } from '../../../app-error.ts';
import type { ClientKeyFrom } from '../../../http/middleware/client-key.ts';
import { defineRoute } from '../../../http/route.ts';
import { readSentryBody } from './body.ts';
import { sentryCliRoutes } from './cli.ts';
import type { Context } from 'koa';

const params = z.object({
  project_id: z.string().regex(/^[1-9][0-9]{0,17}$/, 'the DSN project id: a positive number'),
});
const query = z.looseObject({ sentry_key: z.string().max(128).optional() });

/**
 * Runs an ingest; a 429 also says `X-Sentry-Rate-Limits: <seconds>:error:<scope>`, which the SDKs
 * read to back off: `key` for the key's own limit, `project` for the environment's backpressure.
 */
async function run<T>(ctx: Context, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof AppError && err.code === 'rate_limited') {
      const scope = err.details?.scope === 'key' ? 'key' : 'project';
      ctx.set('X-Sentry-Rate-Limits', `${err.retryAfter ?? 1}:error:${scope}`);
    }
    throw err;
  }
}

/**
 * A Sentry ingest route: POST, the DSN's client key for the path's project (`keyFrom`: only the
 * query or header, or an envelope's `dsn` header too), the /v1 error body, and the event's id as
 * the answer; only the path, the id and what reads the body differ.
 */
function ingestRoute(
  route: { path: string; operationId: string; summary: string },
  keyFrom: ClientKeyFrom,
  ingest: typeof ingestEnvelope | typeof ingestStore,
) {
  return defineRoute({
    method: 'post',
    tags: ['Sentry compatibility'],
    auth: 'client-key',
    clientKey: { projectParam: 'project_id', keyFrom },
    params,
    query,
    errors: 'api',
    ...route,
    response: { status: 200, description: "The event's id", schema: ingestAnswer },
    async handle({ principal, deps, ctx }) {
      const read: SentryBodyReader = (sink, limits) => readSentryBody(ctx.req, sink, limits);
      return run(ctx, () => ingest(captureDeps(deps), { read, auth: principal }));
    },
  });
}

export const envelopeRoute = ingestRoute(
  {
    path: '/api/{project_id}/envelope/',
    operationId: 'sentryEnvelope',
    summary: "A Sentry SDK's envelope: event items are captured, every other item is dropped",
  },
  'request-or-body',
  ingestEnvelope,
);

export const storeRoute = ingestRoute(
  {
    path: '/api/{project_id}/store/',
    operationId: 'sentryStore',
    summary: 'One Sentry event as JSON (the store endpoint of SDKs that predate envelopes)',
  },
  'request',
  ingestStore,
);

export const sentryRoutes = [envelopeRoute, storeRoute, ...sentryCliRoutes];
