// The environment's scrubbing policy (docs/api.md): GET answers the default until a PUT replaces it.
import { z } from 'zod';
import { scrubbingQueries } from '../../../domain/errors/scrubbing/queries.ts';
import { scrubbingPolicy } from '../../../contract/scrubbing.ts';
import { defineRoute } from '../../../http/route.ts';
import { envParams, policyResource } from '../../../contract/errors.ts';
import { policyView as view } from '../../../domain/errors/scrubbing/present.ts';
import { secretKey } from '../route-parts.ts';

const path = '/v1/orgs/{org}/projects/{project}/envs/{env}/scrubbing_policy';

export const getPolicy = defineRoute({
  method: 'get',
  path,
  operationId: 'getScrubbingPolicy',
  summary: "The environment's scrubbing policy",
  ...secretKey('Error tracking', 'observability:read'),
  params: envParams,
  response: { status: 200, description: 'The policy (the default until replaced)', schema: policyResource },
  async handle({ principal, deps }) {
    const { policy, update_time } = await scrubbingQueries(deps.db).policy(principal.envId);
    return view(principal.envName, policy, update_time);
  },
});

export const putPolicy = defineRoute({
  method: 'put',
  path,
  operationId: 'putScrubbingPolicy',
  summary: 'Replace the scrubbing policy; applies to events processed from now on',
  ...secretKey('Error tracking', 'observability:write'),
  params: envParams,
  body: z.strictObject({ policy: scrubbingPolicy }),
  example: {
    policy: { use_default_rules: true, disabled_rules: ['ipv4'], sensitive_keys: ['card_holder', 'x-shop-token'] },
  },
  response: { status: 200, description: 'The stored policy', schema: policyResource },
  async handle({ body, principal, deps }) {
    const updateTime = await scrubbingQueries(deps.db).put(principal.envId, body.policy);
    return view(principal.envName, body.policy, updateTime);
  },
});

export const scrubbingRoutes = [getPolicy, putPolicy];
