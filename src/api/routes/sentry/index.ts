// The Sentry ingest routes (docs/api.md "Sentry compatibility"): what every Sentry SDK posts to
// once its DSN points at Cairn. The client key is the SDK's; errors keep the /v1 body, and a 429
// also says `X-Sentry-Rate-Limits`, which the SDKs read to back off.
import { z } from 'zod';
import { ingestAnswer } from '../../../contract/sentry.ts';
import { captureDeps } from '../../../domain/errors/intake/capture.ts';
import { keyFromAuthHeader, sentryAuthHeader } from '../../../domain/errors/sentry/auth.ts';
import { ingestEnvelope, ingestStore, type SentryRequest } from '../../../domain/errors/sentry/ingest.ts';
import { AppError } from '../../../app-error.ts';
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

const request = (ctx: Context, projectNumber: string, sentryKey: string | undefined): SentryRequest => ({
  read: (sink, limits) => readSentryBody(ctx.req, sink, limits),
  projectNumber,
  publicKey: sentryKey ?? keyFromAuthHeader(sentryAuthHeader((name) => ctx.get(name))),
});

/**
 * A Sentry ingest route: POST, no Cairn key (the DSN's client key), the /v1 error body, and the
 * event's id as the answer; only the path, the id and what reads the body differ.
 */
function ingestRoute(
  route: { path: string; operationId: string; summary: string },
  ingest: typeof ingestEnvelope | typeof ingestStore,
) {
  return defineRoute({
    method: 'post',
    tags: ['Sentry compatibility'],
    auth: 'none',
    params,
    query,
    errors: 'api',
    ...route,
    response: { status: 200, description: "The event's id", schema: ingestAnswer },
    async handle({ params, query, deps, ctx }) {
      return run(ctx, () => ingest(captureDeps(deps), request(ctx, params.project_id, query.sentry_key)));
    },
  });
}

export const envelopeRoute = ingestRoute(
  {
    path: '/api/{project_id}/envelope/',
    operationId: 'sentryEnvelope',
    summary: "A Sentry SDK's envelope: event items are captured, every other item is dropped",
  },
  ingestEnvelope,
);

export const storeRoute = ingestRoute(
  {
    path: '/api/{project_id}/store/',
    operationId: 'sentryStore',
    summary: 'One Sentry event as JSON (the store endpoint of SDKs that predate envelopes)',
  },
  ingestStore,
);

export const sentryRoutes = [envelopeRoute, storeRoute, ...sentryCliRoutes];
