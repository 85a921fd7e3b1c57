// The webhook event catalogue (docs/api.md "Webhooks"). An event's subject is the resource it is
// about: messages with one subject reach an endpoint in the order the changes happened.
export const eventTypes = [
  'error_group.created',
  'error_group.reopened',
  'error_group.resolved',
  'backup.succeeded',
  'backup.failed',
  'restore.succeeded',
  'restore.failed',
  'end_user.created',
  'end_user.deleted',
] as const;

export type EventType = (typeof eventTypes)[number];

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
