// The environment a secret key belongs to: the simplest authenticated call, for checking a key.
import { AppError } from '../../../app-error.ts';
import { tenancyQueries } from '../../../domain/tenancy/queries.ts';
import { defineRoute } from '../../../http/route.ts';
import { envParams, envResource } from '../../../contract/tenancy.ts';
import { envView } from '../../../domain/tenancy/present.ts';
import { z } from 'zod';
import { createConsoleLink } from '../../../domain/console/links.ts';

export const getEnv = defineRoute({
  method: 'get',
  path: '/v1/orgs/{org}/projects/{project}/envs/{env}',
  operationId: 'getEnvironment',
  summary: 'The environment the key belongs to',
  tags: ['Environments'],
  auth: 'secret',
  params: envParams,
  response: { status: 200, description: 'The environment', schema: envResource },
  async handle({ principal, deps }) {
    const env = await tenancyQueries(deps.db).envById(principal.envId);
    if (!env) throw new AppError('not_found', 'the environment no longer exists');
    return envView(env);
  },
});

/** What `cairn console` prints: a one-use link that opens the console with this key's scopes. */
export const createConsoleLinkRoute = defineRoute({
  method: 'post',
  path: '/v1/orgs/{org}/projects/{project}/envs/{env}/console_links',
  operationId: 'createConsoleLink',
  summary: "A one-use link (5 minutes) that opens the console with this key's environment and scopes",
  tags: ['Environments'],
  auth: 'secret',
  params: envParams,
  response: {
    status: 201,
    description: 'The link; open it once within 5 minutes',
    schema: z.object({ url: z.string(), expire_time: z.string() }),
  },
  async handle({ principal, deps }) {
    return createConsoleLink(deps.db, deps.config.CAIRN_BASE_URL, principal.envId, principal.keyId);
  },
});

export const tenancyRoutes = [getEnv, createConsoleLinkRoute];
