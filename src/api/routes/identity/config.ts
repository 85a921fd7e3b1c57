// GET /v1/client/config (docs/api.md "Client configuration"): what a sign-in page renders from.
// Methods not served on the client API are reported, as not enabled, so a page can hide them.
import { z } from 'zod';
import { minPasswordLength } from '../../../domain/identity/passwords.ts';
import { maxPasswordLength } from '../../../contract/identity.ts';
import { envIdentity } from '../../../domain/identity/sessions/sessions.ts';
import { providerLabels } from '../../../domain/social/providers.ts';
import { socialQueries } from '../../../domain/social/queries.ts';
import { defineRoute } from '../../../http/route.ts';

const method = z.object({ enabled: z.boolean() });

export const clientConfig = z
  .object({
    methods: z.object({
      password: method.extend({ min_length: z.number(), max_length: z.number() }),
      totp: method,
      recovery_code: method,
      magic_link: method,
      email_code: method,
      passkey: method,
    }),
    social: z.array(z.object({ provider: z.string(), name: z.string(), start_url: z.string() })),
    branding: z.object({
      name: z.string().nullable(),
      logo_url: z.string().nullable(),
      colors: z.object({
        primary: z.string().nullable(),
        background: z.string().nullable(),
        text: z.string().nullable(),
      }),
    }),
    second_factor_required: z.boolean(),
    session_modes: z.array(z.enum(['server', 'browser'])),
  })
  .meta({ id: 'ClientConfig' });

export const getClientConfig = defineRoute({
  method: 'get',
  path: '/v1/client/config',
  operationId: 'getClientConfig',
  tags: ['Client'],
  auth: 'publishable',
  summary: 'Sign-in methods, social providers and branding of the environment',
  query: z.object({ publishable_key: z.string().optional() }),
  response: { status: 200, description: 'The client configuration', schema: clientConfig },
  async handle({ principal, deps }) {
    const { settings } = await envIdentity(deps.db, principal.envId);
    const b = settings.branding;
    return {
      methods: {
        password: {
          enabled: true,
          min_length: minPasswordLength(settings.require_second_factor),
          max_length: maxPasswordLength,
        },
        totp: { enabled: true },
        recovery_code: { enabled: true },
        magic_link: { enabled: false },
        email_code: { enabled: false },
        passkey: { enabled: false },
      },
      // The page adds publishable_key and a redirect_url the environment allows (redirects.ts).
      social: (await socialQueries(deps.db).providers(principal.envId))
        .filter((p) => p.enabled)
        .map((p) => ({
          provider: p.provider,
          name: providerLabels[p.provider],
          start_url: `${deps.config.CAIRN_BASE_URL}/v1/client/oauth/${p.provider}/start`,
        })),
      branding: {
        name: b.name ?? null,
        logo_url: b.logo_url ?? null,
        colors: {
          primary: b.colors?.primary ?? null,
          background: b.colors?.background ?? null,
          text: b.colors?.text ?? null,
        },
      },
      second_factor_required: settings.require_second_factor,
      session_modes: ['server' as const, 'browser' as const],
    };
  },
});
