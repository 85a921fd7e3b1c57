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
  description:
    "Makes a TOTP secret (SHA-1, 6 digits, 30 seconds) for the session's user and answers it with its otpauth:// URI, shown once; it stays inactive until activated and replaces an enrolment never activated. " +
    'A user whose TOTP is already active gets 409 conflict.',
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
  description:
    'Activates the enrolled secret with a current code from the authenticator app and answers ten recovery codes (xxxx-xxxx-xxxx), shown once; from then on password sign-in needs a factor proof. ' +
    'A wrong code is 400 invalid_request, no enrolment 404 not_found, an active factor 409 conflict.',
  example: { code: '492039' },
  tags: ['Client'],
  auth: 'session',
  summary: 'Activate TOTP with a first code; answers ten recovery codes, shown once',
  body: z.object({ code: z.string().min(1).max(16) }),
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
  description:
    'Turns TOTP off with a current TOTP code or a recovery code; a wrong code is 401 unauthorized and counts toward the sign-in lockout (423 locked_out), and a user without active TOTP gets 404 not_found. ' +
    "The user's tickets not yet redeemed and device approvals not yet collected end; sessions stay.",
  example: { type: 'recovery_code', code: '7k2m-q9xr-4tbw' },
  tags: ['Client'],
  auth: 'session',
  summary: 'Turn TOTP off; needs a current code or a recovery code',
  body: factorProof,
  response: { status: 200, description: 'Disabled', schema: z.object({ disabled: z.literal(true) }) },
  async handle({ body, deps, ctx }) {
    await disableTotp(deps.db, deps.config, currentSession(ctx).user, body);
    return { disabled: true as const };
  },
});

export const factorRoutes = [enroll, activate, disable];
