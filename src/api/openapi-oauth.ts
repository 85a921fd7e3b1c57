// The OAuth endpoints speak RFC 6749's form-encoded bodies and error form, not the /v1 JSON
// conventions, so they are plain koa routes; this describes them for the OpenAPI document.
import { z } from 'zod';

const oauthError = z
  .object({ error: z.string().meta({ example: 'authorization_pending' }), error_description: z.string().optional() })
  .meta({ id: 'OAuthError', description: 'RFC 6749 §5.2 / RFC 8628 §3.5 error' });

const form = (schema: z.ZodType) => ({ required: true, content: { 'application/x-www-form-urlencoded': { schema } } });
const json = (description: string, schema: z.ZodType) => ({ description, content: { 'application/json': { schema } } });

export const oauthPaths = {
  '/v1/oauth/device_authorization': {
    post: {
      operationId: 'deviceAuthorization',
      summary: 'Start the device authorization grant (RFC 8628 §3.1)',
      tags: ['OAuth'],
      security: [],
      requestBody: form(z.object({ client_id: z.string(), scope: z.string().optional() })),
      responses: {
        200: json(
          'The codes',
          z.object({
            device_code: z.string(),
            user_code: z.string().meta({ example: 'BCDF-GHJK' }),
            verification_uri: z.string(),
            verification_uri_complete: z.string(),
            expires_in: z.number().int(),
            interval: z.number().int(),
          }),
        ),
        400: json('invalid_client, unauthorized_client, invalid_scope', oauthError),
      },
    },
  },
  '/v1/oauth/token': {
    post: {
      operationId: 'token',
      summary: 'Poll with the device grant until the user approves (RFC 8628 §3.4)',
      tags: ['OAuth'],
      security: [],
      requestBody: form(
        z.object({
          grant_type: z.literal('urn:ietf:params:oauth:grant-type:device_code'),
          device_code: z.string(),
          client_id: z.string(),
        }),
      ),
      responses: {
        200: json(
          'A session bearer',
          z.object({
            access_token: z.string(),
            token_type: z.literal('Bearer'),
            expires_in: z.number().int(),
            scope: z.string().optional(),
          }),
        ),
        400: json('authorization_pending, slow_down, access_denied, expired_token, invalid_grant', oauthError),
      },
    },
  },
  '/v1/oidc/callback': {
    get: {
      operationId: 'oidcCallback',
      summary: "Every social provider's return address; redirects to the caller's redirect_url",
      tags: ['Social sign-in'],
      security: [],
      requestParams: {
        query: z.object({
          state: z.string(),
          code: z.string().optional(),
          error: z.string().optional(),
          iss: z.string().optional(),
        }),
      },
      responses: {
        302: {
          description: 'To redirect_url with auth_ticket (server mode) or the bearer in the fragment (browser mode)',
        },
        400: json('Unknown, used or expired state', oauthError),
      },
    },
    post: {
      operationId: 'oidcCallbackFormPost',
      summary: 'The same, for providers that answer with response_mode=form_post (Apple)',
      tags: ['Social sign-in'],
      security: [],
      requestBody: form(
        z.object({
          state: z.string(),
          code: z.string().optional(),
          error: z.string().optional(),
          user: z.string().optional(),
        }),
      ),
      responses: { 302: { description: 'As for GET' }, 400: json('Unknown, used or expired state', oauthError) },
    },
  },
};
