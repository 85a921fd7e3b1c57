// Webhook endpoints and their deliveries (docs/api.md "Webhooks"), for the application's server
// with a secret key holding webhooks:read or webhooks:write. Every query is scoped by the key's
// environment; a delivery is found only through an endpoint of that environment.
import { z } from 'zod';
import {
  createEndpointBody,
  deliveryList,
  deliveryParams,
  deliveryResource,
  endpointList,
  endpointParams,
  endpointResource,
  envParams,
  pageQuery,
  updateEndpointBody,
} from '../../../contract/webhooks.ts';
import { deliveryPages, deliveryView, endpointPages, endpointView } from '../../../domain/webhooks/present.ts';
import { tenancyQueries } from '../../../domain/tenancy/queries.ts';
import {
  createEndpoint,
  deleteEndpoint,
  requireEndpoint,
  rotateSecret,
  updateEndpoint,
} from '../../../domain/webhooks/endpoints/endpoints.ts';
import { redeliver } from '../../../domain/webhooks/deliveries/redeliver.ts';
import * as deliveryQueries from '../../../domain/webhooks/deliveries/queries.ts';
import * as endpointQueries from '../../../domain/webhooks/endpoints/queries.ts';
import type { EndpointRow } from '../../../domain/webhooks/endpoints/queries.ts';
import { paginate } from '../../../http/paginate.ts';
import type { AppDeps } from '../../../http/context.ts';
import { defineRoute, type Method } from '../../../http/route.ts';
import { listPage, secretKey } from '../route-parts.ts';

const base = '/v1/orgs/{org}/projects/{project}/envs/{env}/webhook_endpoints';
const read = secretKey('Webhooks', 'webhooks:read');
const write = secretKey('Webhooks', 'webhooks:write');

/** A route on one endpoint: its method, what follows the endpoint's id, who may call it, its id. */
const onEndpoint = (method: Method, suffix: string, access: typeof read | typeof write, operationId: string) => ({
  method,
  operationId,
  path: `${base}/{endpoint_id}${suffix}`,
  ...access,
  params: endpointParams,
});

async function envOf(deps: AppDeps, envId: string) {
  const env = await tenancyQueries(deps.db).envById(envId);
  return { id: envId, mode: env!.mode };
}

export const createEndpointRoute = defineRoute({
  method: 'post',
  path: base,
  operationId: 'createWebhookEndpoint',
  summary: 'Add an endpoint; the answer holds its signing secret, shown this once',
  ...write,
  params: envParams,
  body: createEndpointBody,
  response: { status: 201, description: 'The endpoint, with its secret', schema: endpointResource },
  async handle({ body, principal, deps }) {
    const { row, secret } = await createEndpoint(deps, await envOf(deps, principal.envId), body);
    return endpointView(row, secret);
  },
});

export const listEndpoints = defineRoute({
  method: 'get',
  path: base,
  operationId: 'listWebhookEndpoints',
  summary: "The environment's endpoints, oldest first",
  ...read,
  params: envParams,
  query: pageQuery,
  response: { status: 200, description: 'A page of endpoints', schema: endpointList },
  async handle({ query, principal, deps }) {
    const list = {
      collection: 'webhook_endpoints',
      keyset: endpointPages,
      present: (e: EndpointRow) => endpointView(e),
    } as const;
    return listPage(deps, query, list, (after, limit) =>
      endpointQueries.listEndpoints(deps.db, principal.envId, after, limit),
    );
  },
});

export const getEndpoint = defineRoute({
  ...onEndpoint('get', '', read, 'getWebhookEndpoint'),
  summary: 'An endpoint (without its secret)',
  response: { status: 200, description: 'The endpoint', schema: endpointResource },
  async handle({ params, principal, deps }) {
    return endpointView(await requireEndpoint(deps.db, principal.envId, params.endpoint_id));
  },
});

export const updateEndpointRoute = defineRoute({
  ...onEndpoint('patch', '', write, 'updateWebhookEndpoint'),
  summary: 'Change the URL, event types, description or state of an endpoint',
  body: updateEndpointBody,
  response: { status: 200, description: 'The endpoint', schema: endpointResource },
  async handle({ params, body, principal, deps }) {
    return endpointView(await updateEndpoint(deps, await envOf(deps, principal.envId), params.endpoint_id, body));
  },
});

export const deleteEndpointRoute = defineRoute({
  ...onEndpoint('delete', '', write, 'deleteWebhookEndpoint'),
  summary: 'Delete an endpoint, its deliveries and their attempts; nothing more is sent to it',
  response: { status: 204, description: 'Deleted', schema: z.undefined(), type: 'empty' },
  async handle({ params, principal, deps }) {
    await deleteEndpoint(deps.db, principal.envId, params.endpoint_id);
    return undefined;
  },
});

export const rotateSecretRoute = defineRoute({
  ...onEndpoint('post', ':rotateSecret', write, 'rotateWebhookSecret'),
  summary: 'A new signing secret; for 24 hours every message carries signatures by both the new and the old',
  response: { status: 200, description: 'The endpoint, with its new secret', schema: endpointResource },
  async handle({ params, principal, deps }) {
    const { row, secret } = await rotateSecret(deps, principal.envId, params.endpoint_id);
    return endpointView(row, secret);
  },
});

export const listDeliveries = defineRoute({
  ...onEndpoint('get', '/deliveries', read, 'listWebhookDeliveries'),
  summary: "An endpoint's deliveries of the last 30 days with their attempts, newest first",
  query: pageQuery,
  response: { status: 200, description: 'A page of deliveries', schema: deliveryList },
  async handle({ params, query, principal, deps }) {
    const endpoint = await requireEndpoint(deps.db, principal.envId, params.endpoint_id);
    const page = await paginate(deps.config, query, deliveryPages, (before, limit) =>
      deliveryQueries.listDeliveries(deps.db, endpoint.id, before, limit),
    );
    const attempts = await deliveryQueries.listAttempts(
      deps.db,
      endpoint.id,
      page.items.map((d) => d.message_id),
    );
    return {
      deliveries: page.items.map((d) =>
        deliveryView(
          d,
          attempts.filter((a) => a.message_id === d.message_id),
        ),
      ),
      next_page_token: page.next_page_token,
    };
  },
});

export const redeliverRoute = defineRoute({
  method: 'post',
  path: `${base}/{endpoint_id}/deliveries/{message_id}:redeliver`,
  operationId: 'redeliverWebhook',
  summary: 'One more attempt of a settled delivery, with the same webhook-id and body',
  ...write,
  params: deliveryParams,
  response: { status: 202, description: 'The delivery, pending', schema: deliveryResource },
  async handle({ params, principal, deps }) {
    const { delivery, attempts } = await redeliver(deps, principal.envId, params.endpoint_id, params.message_id);
    return deliveryView(delivery, attempts);
  },
});

export const webhookRoutes = [
  createEndpointRoute,
  listEndpoints,
  getEndpoint,
  updateEndpointRoute,
  deleteEndpointRoute,
  rotateSecretRoute,
  listDeliveries,
  redeliverRoute,
];
