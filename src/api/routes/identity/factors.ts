// TOTP enrolment for the signed-in end user (docs/api.md "TOTP"), with the session bearer.
import { z } from 'zod';
import { appName } from '../../../domain/identity/links/links.ts';
import { envIdentity } from '../../../domain/identity/sessions/sessions.ts';
import { activateTotp, disableTotp, enrollTotp } from '../../../domain/identity/factors/totp.ts';
import { defineRoute } from '../../../http/route.ts';
import { currentSession } from './client.ts';
import { factorProof } from '../../../contract/identity.ts';

export const enroll = defineRoute({
  method: 'post',
  path: '/v1/client/factors/totp',
  operationId: 'enrollTotp',
  tags: ['Client'],
  auth: 'session',
  summary: 'Start TOTP enrolment: a new secret for the authenticator app (inactive until activated)',
  response: {
    status: 200,
    description: 'The secret, shown once',
    schema: z.object({ secret: z.string(), otpauth_uri: z.string() }),
  },
  async handle({ principal, deps, ctx }) {
    const env = await envIdentity(deps.db, principal.envId);
    return enrollTotp(deps.db, deps.config, currentSession(ctx).user, appName(env));
  },
});

export const activate = defineRoute({
  method: 'post',
  path: '/v1/client/factors/totp:activate',
  operationId: 'activateTotp',
  tags: ['Client'],
  auth: 'session',
  summary: 'Activate TOTP with a first code; answers ten recovery codes, shown once',
  body: z.object({ code: z.string().min(1).max(16) }),
  example: { code: '492039' },
  response: {
    status: 200,
    description: 'Active',
    schema: z.object({ recovery_codes: z.array(z.string()).length(10) }),
  },
  async handle({ body, deps, ctx }) {
    return { recovery_codes: await activateTotp(deps.db, deps.config, currentSession(ctx).user, body.code) };
  },
});

export const disable = defineRoute({
  method: 'post',
  path: '/v1/client/factors/totp:disable',
  operationId: 'disableTotp',
  tags: ['Client'],
  auth: 'session',
  summary: 'Turn TOTP off; needs a current code or a recovery code',
  body: factorProof,
  example: { type: 'recovery_code', code: '7k2m-q9xr-4tbw' },
  response: { status: 200, description: 'Disabled', schema: z.object({ disabled: z.literal(true) }) },
  async handle({ body, deps, ctx }) {
    await disableTotp(deps.db, deps.config, currentSession(ctx).user, body);
    return { disabled: true as const };
  },
});

export const factorRoutes = [enroll, activate, disable];
