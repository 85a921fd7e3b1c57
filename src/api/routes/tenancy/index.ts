// The environment a secret key belongs to: the simplest authenticated call, for checking a key.
import { AppError } from '../../../errors.ts';
import { tenancyQueries } from '../../../domain/tenancy/queries.ts';
import { defineRoute } from '../../../http/route.ts';
import { envParams, envResource, envView } from '../../../contract/tenancy.ts';

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

export const tenancyRoutes = [getEnv];
