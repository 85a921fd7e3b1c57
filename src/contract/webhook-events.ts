// The event catalogue's bodies (docs/api.md "Webhooks"): an event's data is the resource as the
// API shows it, made by the same presenter as the API's answer, so a receiver and an API client
// read one shape. The actions that cause the events call these (the domain's one use of the
// presenters: a message is part of the public contract, like an answer).
import type { BackupRow, OperationRow } from '../domain/backups/queries.ts';
import type { EndUserRow } from '../domain/identity/queries.ts';
import type { GroupRow } from '../domain/errors/groups/queries.ts';
import type { WebhookEvent } from '../domain/webhooks/catalogue.ts';
import { backupResource, operationResource } from './backups.ts';
import { groupView } from './errors.ts';
import { endUserResource } from './identity.ts';

type Env = { id: string; name: string };

export function errorGroupEvent(
  env: Env,
  type: 'error_group.created' | 'error_group.reopened' | 'error_group.resolved',
  g: GroupRow,
): WebhookEvent {
  return { envId: env.id, type, subject: g.id, data: groupView(env.name, g) };
}

export function backupEvent(b: BackupRow): WebhookEvent {
  const type = b.state === 'succeeded' ? 'backup.succeeded' : 'backup.failed';
  return {
    envId: b.env_id,
    type,
    subject: b.id,
    data: backupResource(b),
    ...(b.finish_time ? { time: b.finish_time } : {}),
  };
}

/**
 * A restore's operation, as `GET /v1/operations/{id}` shows it, for the environment that asked for
 * it (`op.requester_env_id`, whose key reads the operation); `targetName` names the target.
 */
export function restoreEvent(op: OperationRow, targetName: string): WebhookEvent {
  const type = op.state === 'succeeded' ? 'restore.succeeded' : 'restore.failed';
  return { envId: op.requester_env_id, type, subject: op.id, data: operationResource(op, targetName) };
}

export function endUserCreatedEvent(env: Env, u: EndUserRow): WebhookEvent {
  return { envId: env.id, type: 'end_user.created', subject: u.id, data: endUserResource(env.name, u) };
}

export function endUserDeletedEvent(env: Env, id: string): WebhookEvent {
  return {
    envId: env.id,
    type: 'end_user.deleted',
    subject: id,
    data: { id, name: `${env.name}/end_users/${id}`, deleted: true },
  };
}
