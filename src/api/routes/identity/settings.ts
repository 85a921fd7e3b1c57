// The environment's identity settings (branding, second-factor policy, session lifetimes, allowed
// redirect origins, per-IP limits), read and replaced with the secret key. Unset fields take the
// defaults, which a GET shows filled in.
import { envIdentity } from '../../../domain/identity/sessions/sessions.ts';
import { identitySettingsSchema, saveIdentitySettings } from '../../../domain/identity/settings.ts';
import { defineRoute } from '../../../http/route.ts';
import { envParams } from '../../../contract/tenancy.ts';
import { secretKey } from '../route-parts.ts';

const path = '/v1/orgs/{org}/projects/{project}/envs/{env}/identity_settings';
const settings = identitySettingsSchema.meta({ id: 'IdentitySettings' });

export const getIdentitySettings = defineRoute({
  method: 'get',
  path,
  operationId: 'getIdentitySettings',
  summary: "The environment's sign-in settings",
  ...secretKey('End users', 'auth:read'),
  params: envParams,
  response: { status: 200, description: 'The settings, defaults filled in', schema: settings },
  async handle({ principal, deps }) {
    return (await envIdentity(deps.db, principal.envId)).settings;
  },
});

export const putIdentitySettings = defineRoute({
  method: 'put',
  path,
  operationId: 'replaceIdentitySettings',
  summary: "Replace the environment's sign-in settings",
  ...secretKey('End users', 'auth:write'),
  params: envParams,
  body: identitySettingsSchema.strict(),
  example: {
    branding: { name: 'Acme Shop', logo_url: 'https://app.example.com/logo.svg', colors: { primary: '#1f6feb' } },
    require_second_factor: false,
    session_idle_seconds: 604800,
    session_lifetime_seconds: 2592000,
    redirect_origins: ['https://app.example.com', 'http://localhost:3000'],
    redirect_urls: ['https://app.example.com/auth/callback'],
    rate_limits: { sign_in: { points: 100, seconds: 60 } },
    breached_api: { enabled: true, fail: 'closed' },
  },
  response: { status: 200, description: 'The settings as stored', schema: settings },
  async handle({ body, principal, deps }) {
    await saveIdentitySettings(deps.db, principal.envId, body);
    return (await envIdentity(deps.db, principal.envId)).settings;
  },
});
