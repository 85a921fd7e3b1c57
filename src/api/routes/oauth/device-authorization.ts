// POST /v1/oauth/device_authorization (RFC 8628 §3.1): a device asks for codes to show its user.
import { z } from 'zod';
import { startDeviceAuthorization } from '../../../domain/oauth/device.ts';
import { defineRoute } from '../../../http/route.ts';
import { clientIdOf, param } from './form.ts';

export const deviceAuthorization = defineRoute({
  method: 'post',
  path: '/v1/oauth/device_authorization',
  operationId: 'deviceAuthorization',
  summary: 'Start the device authorization grant (RFC 8628 §3.1)',
  tags: ['OAuth'],
  auth: 'none',
  bodyType: 'form',
  errors: 'oauth',
  // RFC 6749 §3.1: parameters the server does not know are ignored.
  body: z.looseObject({ client_id: param.optional(), scope: param.optional() }),
  example: { client_id: 'cairn_client_01jd8x2k3m4n5p6q7r8s9t0v1w', scope: 'profile' },
  response: {
    status: 200,
    description: 'The codes',
    schema: z.object({
      device_code: z.string(),
      user_code: z.string().meta({ example: 'BCDF-GHJK' }),
      verification_uri: z.string(),
      verification_uri_complete: z.string(),
      expires_in: z.number().int(),
      interval: z.number().int(),
    }),
  },
  async handle({ body, deps, ctx }) {
    return startDeviceAuthorization(deps.db, deps.config, {
      clientId: clientIdOf(ctx, body.client_id),
      scope: body.scope,
    });
  },
});
