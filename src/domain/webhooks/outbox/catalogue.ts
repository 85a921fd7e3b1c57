// Webhook events (docs/api.md "Webhooks"; the types are contract/webhook-types.ts). An
// event's subject is the resource it is about: messages with one subject reach an endpoint in the
// order the changes happened.
import type { EventType } from '../../../contract/webhook-types.ts';

export type { EventType };

/** An event as the action that caused it reports it; `data` is the resource as the API shows it. */
export interface WebhookEvent {
  envId: string;
  type: EventType;
  /** The resource's id: the ordering key. */
  subject: string;
  data: unknown;
  /** When the change happened (the body's `timestamp`); now when absent. */
  time?: Date;
}

/** The bytes every attempt sends: `{"type", "timestamp", "data"}`, fixed when the event is written. */
export function messageBody(event: WebhookEvent, now: Date = new Date()): string {
  return JSON.stringify({ type: event.type, timestamp: (event.time ?? now).toISOString(), data: event.data });
}
