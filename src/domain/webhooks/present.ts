// Webhook endpoints and deliveries as the API shows them (contract/webhooks.ts), and the keysets
// their lists page by.
import type { Delivery, Endpoint } from '../../contract/webhooks.ts';
import { byId, type Keyset } from '../../contract/pages.ts';
import type { AttemptRow, DeliveryRow } from './deliveries/queries.ts';
import type { EndpointRow } from './endpoints/queries.ts';

export const endpointPages: Keyset<EndpointRow, string> = byId<EndpointRow>('webhook_endpoints');

export function endpointView(e: EndpointRow, secret?: string): Endpoint {
  return {
    id: e.id,
    url: e.url,
    event_types: e.event_types,
    description: e.description,
    state: e.state,
    ...(e.disabled_reason && e.state === 'disabled' ? { disabled_reason: e.disabled_reason } : {}),
    ...(secret ? { secret } : {}),
    create_time: e.create_time.toISOString(),
    update_time: e.update_time.toISOString(),
  };
}

/** Deliveries page by their sequence number, newest first. */
export const deliveryPages: Keyset<DeliveryRow, string> = {
  purpose: 'webhook_deliveries',
  positionOf: (d) => String(d.seq),
  isPosition: (v): v is string => typeof v === 'string' && /^[0-9]{1,19}$/.test(v),
};

export function deliveryView(d: DeliveryRow, attempts: AttemptRow[]): Delivery {
  return {
    id: d.message_id,
    event_type: d.event_type,
    // A message waiting behind an earlier one about the same resource is pending to the receiver.
    state: d.state === 'waiting' ? 'pending' : d.state,
    attempts: attempts.map((a) => ({
      time: a.time.toISOString(),
      ...(a.status_code !== null ? { status_code: a.status_code } : {}),
      duration_ms: a.duration_ms,
      ...(a.error ? { error: a.error } : {}),
    })),
    ...(d.state === 'pending' && d.next_attempt_time ? { next_attempt_time: d.next_attempt_time.toISOString() } : {}),
  };
}
