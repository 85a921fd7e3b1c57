// Social sign-in routes: the start (publishable key) and the environment's provider settings
// (secret key). The providers' common callback is callback.ts.
import { z } from 'zod';
import { startSocialSignIn } from '../../../domain/social/flow.ts';
import { putProvider } from '../../../domain/social/providers.ts';
import { providerSchema, providerInput, providerNames } from '../../../contract/social.ts';
import { providerResource } from '../../../domain/social/present.ts';
import { socialQueries } from '../../../domain/social/queries.ts';
import { consumeLimit } from '../../../domain/identity/limits.ts';
import { AppError } from '../../../app-error.ts';
import { defineRoute } from '../../../http/route.ts';
import { clientFrom } from '../../../http/client.ts';
import { envParams } from '../../../contract/tenancy.ts';

const provider = z.enum(providerNames);
const base = '/v1/orgs/{org}/projects/{project}/envs/{env}/social_providers';
const tags = ['Social sign-in'];

export const startRoute = defineRoute({
  method: 'get',
  path: '/v1/client/oauth/{provider}/start',
  operationId: 'startSocialSignIn',
  tags,
  auth: 'publishable',
  summary: 'Send the browser to the provider (state, nonce, PKCE S256); it returns through /v1/oidc/callback',
  params: z.object({ provider }),
  query: z.object({
    publishable_key: z.string().optional(),
    redirect_url: z.string().min(1).max(2048),
    session_mode: z.enum(['server', 'browser']).default('server'),
  }),
  response: {
    status: 302,
    description: "Redirect to the provider's authorization page",
    schema: z.string().optional(),
  },
  async handle({ params, query, principal, deps, ctx }) {
    await consumeLimit(deps.db, 'sign_in', principal.envId, clientFrom(ctx).ip);
    ctx.redirect(
      await startSocialSignIn(deps.db, deps.config, {
        envId: principal.envId,
        provider: params.provider,
        redirectUrl: query.redirect_url,
        sessionMode: query.session_mode,
      }),
    );
    return undefined;
  },
});

export const listProviders = defineRoute({
  method: 'get',
  path: base,
  operationId: 'listSocialProviders',
  summary: "The environment's social providers (secrets never shown)",
  tags,
  auth: 'secret',
  scope: 'auth:read',
  params: envParams,
  response: {
    status: 200,
    description: 'The providers',
    schema: z.object({ social_providers: z.array(providerSchema) }),
  },
  async handle({ principal, deps }) {
    return { social_providers: (await socialQueries(deps.db).providers(principal.envId)).map(providerResource) };
  },
});

export const putProviderRoute = defineRoute({
  method: 'put',
  path: `${base}/{provider}`,
  operationId: 'putSocialProvider',
  summary: 'Set up a social provider (Google may use the shared client: send {})',
  tags,
  auth: 'secret',
  scope: 'auth:write',
  params: envParams.extend({ provider }),
  body: providerInput,
  example: {
    enabled: true,
    client_id: 'Iv1.8a61f9b3a7aba766',
    client_secret: '4f2a9c0d7e1b3a5c8d6f9e2b0a1c3d5e7f9a2b4c',
  },
  response: { status: 200, description: 'The provider as stored', schema: providerSchema },
  async handle({ params, body, principal, deps }) {
    await putProvider(deps.db, deps.config, principal.envId, params.provider, body);
    return providerResource((await socialQueries(deps.db).provider(principal.envId, params.provider))!);
  },
});

export const deleteProviderRoute = defineRoute({
  method: 'delete',
  path: `${base}/{provider}`,
  operationId: 'deleteSocialProvider',
  summary: 'Remove a social provider; its users keep their accounts',
  tags,
  auth: 'secret',
  scope: 'auth:write',
  params: envParams.extend({ provider }),
  response: { status: 200, description: 'Removed', schema: z.object({}) },
  async handle({ params, principal, deps }) {
    if (!(await socialQueries(deps.db).deleteProvider(principal.envId, params.provider)))
      throw new AppError('not_found', `${params.provider} is not set up`);
    return {};
  },
});

export const socialRoutes = [startRoute, listProviders, putProviderRoute, deleteProviderRoute];
