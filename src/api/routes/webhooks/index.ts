// Webhook endpoints and their deliveries (docs/api.md "Webhooks"), for the application's server
// with a secret key holding webhooks:read or webhooks:write. Every query is scoped by the key's
// environment; a delivery is found only through an endpoint of that environment.
import {
  createEndpointBody,
  deliveryList,
  deliveryParams,
  deliveryResource,
  endpointList,
  endpointParams,
  endpointResource,
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
import type { AppDeps } from '../../../http/context.ts';
import { defineRoute } from '../../../http/route.ts';
import { envResource } from '../resource.ts';
import { listPageWith } from '../route-parts.ts';

const endpoints = envResource('Webhooks', 'webhooks', 'webhook_endpoints/{endpoint_id}', endpointParams);

/** The environment with its mode, which decides the addresses an endpoint may have (egress rules). */
async function envOf(deps: AppDeps, envId: string) {
  const env = await tenancyQueries(deps.db).envById(envId);
  return { id: envId, mode: env!.mode };
}

export const createEndpointRoute = endpoints.create({
  operationId: 'createWebhookEndpoint',
  summary: 'Add an endpoint; the answer holds its signing secret, shown this once',
  body: createEndpointBody,
  example: {
    url: 'https://shop.example.com/webhooks/cairn',
    event_types: ['error_group.created', 'backup.failed', 'end_user.deleted'],
    description: 'Shop backend',
  },
  response: { description: 'The endpoint, with its secret', schema: endpointResource },
  async run({ deps, principal }, body) {
    const { row, secret } = await createEndpoint(deps, await envOf(deps, principal.envId), body);
    return endpointView(row, secret);
  },
});

export const listEndpoints = endpoints.list({
  operationId: 'listWebhookEndpoints',
  summary: "The environment's endpoints, oldest first",
  response: { description: 'A page of endpoints', schema: endpointList },
  keyset: endpointPages,
  present: (e) => endpointView(e),
  fetch: ({ deps, principal }, after, limit) => endpointQueries.listEndpoints(deps.db, principal.envId, after, limit),
});

export const getEndpoint = endpoints.get({
  operationId: 'getWebhookEndpoint',
  summary: 'An endpoint (without its secret)',
  response: { description: 'The endpoint', schema: endpointResource },
  run: async ({ deps, principal }, id) => endpointView(await requireEndpoint(deps.db, principal.envId, id)),
});

export const updateEndpointRoute = endpoints.update({
  operationId: 'updateWebhookEndpoint',
  summary: 'Change the URL, event types, description or state of an endpoint',
  body: updateEndpointBody,
  example: { event_types: ['*'], state: 'enabled' },
  response: { description: 'The endpoint', schema: endpointResource },
  async run({ deps, principal }, id, body) {
    return endpointView(await updateEndpoint(deps, await envOf(deps, principal.envId), id, body));
  },
});

export const deleteEndpointRoute = endpoints.delete({
  operationId: 'deleteWebhookEndpoint',
  summary: 'Delete an endpoint, its deliveries and their attempts; nothing more is sent to it',
  run: ({ deps, principal }, id) => deleteEndpoint(deps.db, principal.envId, id),
});

export const rotateSecretRoute = defineRoute({
  ...endpoints.onItem('post', ':rotateSecret', endpoints.write, 'rotateWebhookSecret'),
  summary: 'A new signing secret; for 24 hours every message carries signatures by both the new and the old',
  response: { status: 200, description: 'The endpoint, with its new secret', schema: endpointResource },
  async handle({ params, principal, deps }) {
    const { row, secret } = await rotateSecret(deps, principal.envId, params.endpoint_id);
    return endpointView(row, secret);
  },
});

export const listDeliveries = defineRoute({
  ...endpoints.onItemList('deliveries', 'listWebhookDeliveries', {
    description: 'A page of deliveries',
    schema: deliveryList,
  }),
  summary: "An endpoint's deliveries of the last 30 days with their attempts, newest first",
  async handle({ params, query, principal, deps }) {
    const endpoint = await requireEndpoint(deps.db, principal.envId, params.endpoint_id);
    const deliveries = { collection: 'deliveries', keyset: deliveryPages, present: deliveryView } as const;
    return listPageWith(
      deps,
      query,
      deliveries,
      (before, limit) => deliveryQueries.listDeliveries(deps.db, endpoint.id, before, limit),
      {
        fetch: (rows) =>
          deliveryQueries.listAttempts(
            deps.db,
            endpoint.id,
            rows.map((d) => d.message_id),
          ),
        of: (attempt, delivery) => attempt.message_id === delivery.message_id,
      },
    );
  },
});

export const redeliverRoute = defineRoute({
  ...endpoints.onItem('post', '/deliveries/{message_id}:redeliver', endpoints.write, 'redeliverWebhook'),
  params: deliveryParams,
  summary: 'One more attempt of a settled delivery, with the same webhook-id and body',
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
