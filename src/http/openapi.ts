// The OpenAPI 3.1 document, generated from the same route declarations that validate requests,
// so the document cannot drift from the behaviour.
import { createDocument } from 'zod-openapi';
import { z } from 'zod';
import { errorStatus } from '../errors.ts';
import { oauthPaths } from '../api/openapi-oauth.ts';
import type { RouteDef } from './route.ts';

export const errorBody = z
  .object({
    code: z.enum(Object.keys(errorStatus) as [keyof typeof errorStatus, ...(keyof typeof errorStatus)[]]),
    message: z.string(),
    request_id: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'Error' });

function errorResponses(
  def: RouteDef,
): Record<string, { description: string; content: { 'application/json': { schema: typeof errorBody } } }> {
  const statuses: Record<string, string> = {
    400: 'invalid_request',
    500: 'internal',
    503: 'store_unavailable (with Retry-After)',
  };
  if (def.auth !== 'none') Object.assign(statuses, { 401: 'unauthorized', 403: 'forbidden' });
  if (def.params) statuses[404] = 'not_found';
  if (def.body) statuses[413] = 'invalid_request (body too large)';
  return Object.fromEntries(
    Object.entries(statuses).map(([status, description]) => [
      status,
      { description, content: { 'application/json': { schema: errorBody } } },
    ]),
  );
}

export function buildOpenApi(routes: readonly RouteDef[], serverUrl: string): ReturnType<typeof createDocument> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const def of routes) {
    if (!def.path.startsWith('/v1/')) continue;
    const security = {
      none: [],
      secret: [{ secretKey: def.scope ? [def.scope] : [] }],
      publishable: [{ publishableKey: [] }],
      session: [{ sessionBearer: [] }],
    }[def.auth];
    (paths[def.path] ??= {})[def.method] = {
      operationId: def.operationId,
      summary: def.summary,
      tags: def.tags,
      security,
      requestParams: { ...(def.params ? { path: def.params } : {}), ...(def.query ? { query: def.query } : {}) },
      ...(def.body ? { requestBody: { required: true, content: { 'application/json': { schema: def.body } } } } : {}),
      responses: {
        [def.response.status]: {
          description: def.response.description,
          content: { 'application/json': { schema: def.response.schema } },
        },
        ...errorResponses(def),
      },
    };
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Cairn API',
      version: '1',
      description: 'Sign-in for end users, Postgres backups and error tracking.',
    },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: {
        secretKey: { type: 'http', scheme: 'bearer', description: 'A secret key, cairn_sk_…' },
        sessionBearer: {
          type: 'http',
          scheme: 'bearer',
          description: "An end user's session token (browser mode, or a device-grant access token)",
        },
        publishableKey: {
          type: 'apiKey',
          in: 'header',
          name: 'Cairn-Publishable-Key',
          description: 'A publishable key, cairn_pk_…; also accepted as the publishable_key query parameter',
        },
      },
    },
    paths: { ...paths, ...oauthPaths } as Parameters<typeof createDocument>[0]['paths'],
  });
}
