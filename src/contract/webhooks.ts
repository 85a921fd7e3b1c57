// Shapes of the webhooks API (docs/api.md "Webhooks"): endpoints, their deliveries and attempts
// (the event types are webhook-types.ts). The presenters are domain/webhooks/present.ts.
import { z } from 'zod';
import { pageOf, pageQuery } from './pages.ts';
import { resource } from './resource.ts';
import { envParams } from './tenancy.ts';
import { eventTypes } from './webhook-types.ts';

export { envParams, pageQuery };

const endpointId = z.string().regex(/^whep_[0-9a-z]{26}$/, 'a webhook endpoint id such as whep_01j…');
const messageId = z.string().regex(/^whmsg_[0-9a-z]{26}$/, 'a message id such as whmsg_01j…');

export const endpointParams = envParams.extend({ endpoint_id: endpointId });
export const deliveryParams = endpointParams.extend({ message_id: messageId });

const eventType = z.enum(eventTypes);

/** Non-empty; `["*"]`, alone, is every type. Repeats are dropped. */
export const eventTypeList = z
  .array(z.union([eventType, z.literal('*')]))
  .min(1)
  .max(eventTypes.length + 1)
  .refine((types) => !types.includes('*') || types.length === 1, {
    message: '"*" means every event type and stands alone',
  })
  .transform((types) => [...new Set(types)])
  .meta({ description: 'The event types sent to the endpoint; `["*"]` for all', example: ['error_group.created'] });

/**
 * A URL the service POSTs to: a webhook endpoint's, an alert rule's Slack URL. Here only its length;
 * where it may point is the target rule both are checked against (domain/webhooks/endpoints/targets.ts).
 */
export const targetUrl = (meta: { description: string; example: string }) => z.string().max(2048).meta(meta);

const url = targetUrl({
  description:
    'Where messages are POSTed. A live environment takes only https URLs of public hosts; a test environment http too, and private hosts only where the operator allows them (CAIRN_PRIVATE_TARGETS).',
  example: 'https://example.com/webhooks/cairn',
});
const description = z.string().max(1000);

export const createEndpointBody = z.strictObject({
  url,
  event_types: eventTypeList,
  description: description.optional(),
});

export const updateEndpointBody = z
  .strictObject({
    url: url.optional(),
    event_types: eventTypeList.optional(),
    description: description.optional(),
    state: z.enum(['enabled', 'disabled']).optional(),
  })
  .meta({ description: 'Only the fields given change. Enabling a disabled endpoint clears its reason.' });

export const endpointResource = resource('WebhookEndpoint', {
  id: z.string(),
  url: z.string(),
  event_types: z.array(z.string()),
  description: z.string(),
  state: z.enum(['enabled', 'disabled']),
  disabled_reason: z.string().optional(),
  secret: z
    .string()
    .optional()
    .meta({ description: 'Only in the answers of create and rotateSecret: `whsec_` and base64 of 32 bytes' }),
  create_time: z.string(),
  update_time: z.string(),
});

export type Endpoint = z.output<typeof endpointResource>;
/** What creating an endpoint takes: `event_types` `["*"]` is every type. */
export type EndpointInput = z.input<typeof createEndpointBody>;
/** What updating an endpoint takes: only the fields given change. */
export type EndpointUpdate = z.input<typeof updateEndpointBody>;

export const endpointList = pageOf('webhook_endpoints', endpointResource).meta({ id: 'WebhookEndpointList' });

const attempt = z.object({
  time: z.string(),
  status_code: z.number().int().optional(),
  duration_ms: z.number().int(),
  error: z.string().optional(),
});

export const deliveryResource = resource('WebhookDelivery', {
  id: z.string().meta({ description: 'The message id: the `webhook-id` header of every attempt' }),
  event_type: z.string(),
  state: z.enum(['pending', 'succeeded', 'failed']),
  attempts: z.array(attempt),
  next_attempt_time: z.string().optional(),
});

export type Delivery = z.output<typeof deliveryResource>;

export const deliveryList = pageOf('deliveries', deliveryResource).meta({ id: 'WebhookDeliveryList' });
