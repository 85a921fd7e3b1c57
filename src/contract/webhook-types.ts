// The webhook event catalogue (docs/api.md "Webhooks"): every type an endpoint may subscribe to.
// Kept apart from webhooks.ts, without zod, so that the CLI names the types without bundling zod.
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
