// POST /v1/oauth/token (RFC 8628 §3.4): the device polls until its user approves, then gets a
// session bearer. Only the device grant is served.
import { z } from 'zod';
import { isDeviceGrant, pollDeviceToken } from '../../../domain/oauth/device.ts';
import { OAuthError } from '../../../domain/oauth/errors.ts';
import { clientFrom } from '../../../http/client.ts';
import { defineRoute } from '../../../http/route.ts';
import { clientIdOf, param } from './form.ts';

export const token = defineRoute({
  method: 'post',
  path: '/v1/oauth/token',
  operationId: 'token',
  summary: 'Poll with the device grant until the user approves (RFC 8628 §3.4)',
  tags: ['OAuth'],
  auth: 'none',
  bodyType: 'form',
  errors: 'oauth',
  body: z.looseObject({
    grant_type: param.optional().meta({ example: 'urn:ietf:params:oauth:grant-type:device_code' }),
    device_code: param.optional(),
    client_id: param.optional(),
  }),
  example: {
    grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
    device_code: 'cairn_dvc_7QmZ2xK9pL4vR8tN3wY6bC1dF5gH0jS2',
    client_id: 'cairn_client_01jd8x2k3m4n5p6q7r8s9t0v1w',
  },
  response: {
    status: 200,
    description: 'A session bearer',
    schema: z.object({
      access_token: z.string(),
      token_type: z.literal('Bearer'),
      expires_in: z.number().int(),
      scope: z.string().optional(),
    }),
  },
  async handle({ body, deps, ctx }) {
    if (!body.grant_type) throw new OAuthError('invalid_request', 'grant_type is required');
    if (!isDeviceGrant(body.grant_type))
      throw new OAuthError('unsupported_grant_type', 'only urn:ietf:params:oauth:grant-type:device_code is served');
    return pollDeviceToken(deps.db, {
      clientId: clientIdOf(ctx, body.client_id),
      deviceCode: body.device_code,
      from: clientFrom(ctx),
    });
  },
});
