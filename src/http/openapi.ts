// The OpenAPI 3.1 document, generated from the same route declarations that validate requests,
// so the document cannot drift from the behaviour: the /v1 API, the OAuth endpoints, the social
// callback, the Account Portal's pages and the console's alike.
import { createDocument } from 'zod-openapi';
import { z } from 'zod';
import { errorStatus } from '../app-error.ts';
import { consoleCookie } from './cookies.ts';
import { readOperationDocs } from './operation-docs.ts';
import type { RouteDef } from './route.ts';

export const errorBody = z
  .object({
    code: z.enum(Object.keys(errorStatus) as [keyof typeof errorStatus, ...(keyof typeof errorStatus)[]]),
    message: z.string(),
    request_id: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'Error' });

const oauthErrorBody = z
  .object({ error: z.string().meta({ example: 'authorization_pending' }), error_description: z.string().optional() })
  .meta({ id: 'OAuthError', description: 'RFC 6749 §5.2 / RFC 8628 §3.5 error' });

type Content = Record<string, { schema: z.ZodType }>;

function errorResponses(def: RouteDef): Record<string, { description: string; content?: Content }> {
  if (def.errors && def.errors !== 'api' && def.errors !== 'oauth')
    return { '4XX': { description: 'A page that says what went wrong', content: html } };
  if (def.errors === 'oauth')
    return {
      400: {
        description:
          'invalid_request, invalid_client, invalid_scope, authorization_pending, slow_down, access_denied, expired_token, invalid_grant',
        content: { 'application/json': { schema: oauthErrorBody } },
      },
      503: {
        description: 'temporarily_unavailable (with Retry-After)',
        content: { 'application/json': { schema: oauthErrorBody } },
      },
    };
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

const html: Content = { 'text/html': { schema: z.string() } };

function answer(def: RouteDef): { description: string; content?: Content } {
  const { description, schema, type = 'json' } = def.response;
  if (type === 'redirect' || type === 'empty') return { description };
  if (type === 'html') return { description, content: html };
  if (type === 'css') return { description, content: { 'text/css': { schema: z.string() } } };
  return { description, content: { 'application/json': { schema } } };
}

/** The route's security requirements, by its auth kind. */
const securityOf = (def: RouteDef) =>
  ({
    none: [],
    secret: [{ secretKey: def.scope ? [def.scope] : [] }],
    publishable: [{ publishableKey: [] }],
    session: [{ sessionBearer: [] }],
    console: [{ consoleSession: def.scope ? [def.scope] : [] }],
    // Either scheme (OpenAPI: alternatives are separate requirement objects).
    'client-key': [{ sentryKey: [] }, { sentryAuth: [] }],
  })[def.auth];

export function buildOpenApi(routes: readonly RouteDef[], serverUrl: string): ReturnType<typeof createDocument> {
  const paths: Record<string, Record<string, unknown>> = {};
  const docs = readOperationDocs();
  for (const def of routes) {
    const security = securityOf(def);
    (paths[def.path] ??= {})[def.method] = {
      operationId: def.operationId,
      summary: def.summary,
      ...(docs.has(def.operationId) ? { description: docs.get(def.operationId) } : {}),
      tags: def.tags,
      security,
      requestParams: { ...(def.params ? { path: def.params } : {}), ...(def.query ? { query: def.query } : {}) },
      ...(def.body
        ? {
            requestBody: {
              required: true,
              content: {
                [def.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json']: {
                  schema: def.body,
                  ...(def.example === undefined ? {} : { example: def.example }),
                },
              },
            },
          }
        : {}),
      responses: { [def.response.status]: answer(def), ...errorResponses(def) },
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
        consoleSession: {
          type: 'apiKey',
          in: 'cookie',
          name: consoleCookie,
          description:
            "The console's session (a secret key or a one-use link signs the browser in at /console/sign-in)",
        },
        publishableKey: {
          type: 'apiKey',
          in: 'header',
          name: 'Cairn-Publishable-Key',
          description: 'A publishable key, cairn_pk_…; also accepted as the publishable_key query parameter',
        },
        sentryKey: {
          type: 'apiKey',
          in: 'query',
          name: 'sentry_key',
          description: "A Sentry DSN's public key (a client key), as the JavaScript SDKs send it",
        },
        sentryAuth: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Sentry-Auth',
          description:
            "Sentry sentry_key=<public key>, … (or Authorization: Sentry … without it); an envelope may name the key in its header line's dsn instead",
        },
      },
    },
    paths: paths as Parameters<typeof createDocument>[0]['paths'],
  });
}
