// Backups and restore operations as the API shows them (contract/backups.ts), the keyset their
// list pages by, and the backup.* and restore.* webhook events, whose data is the same resource.
import type { Backup, Operation, Verification } from '../../contract/backups.ts';
import { byId } from '../../contract/pages.ts';
import type { WebhookEvent } from '../webhooks/outbox/catalogue.ts';
import type { BackupRow, OperationRow } from './queries.ts';

/** Backups page by id (ULIDs), newest first. */
export const backupPages = byId<BackupRow>('backups');

export function backupResource(b: BackupRow): Backup {
  return {
    id: b.id,
    state: b.state,
    type: b.type,
    trigger: b.trigger,
    key: b.object_key,
    size_bytes: b.size_bytes === null ? null : Number(b.size_bytes),
    sha256: b.sha256,
    billable: b.billable,
    duration_ms: b.duration_ms,
    pg_version: b.pg_version,
    pg_dump_version: b.pg_dump_version,
    encryption: b.key_id ? { format: 'cairn-bk1', algorithm: 'AES-256-GCM', key_id: b.key_id } : null,
    error: b.error,
    verified_time: b.verified_time?.toISOString() ?? null,
    verification: b.verification,
    create_time: b.create_time.toISOString(),
    start_time: b.start_time?.toISOString() ?? null,
    finish_time: b.finish_time?.toISOString() ?? null,
    expire_time: b.expire_time.toISOString(),
    ...(b.state === 'running' && b.progress_bytes !== null ? { progress_bytes: Number(b.progress_bytes) } : {}),
  };
}

export function operationResource(
  op: OperationRow,
  targetEnvName: string,
  verification: Verification | null = null,
): Operation {
  const done = op.state === 'succeeded' || op.state === 'failed';
  const metadata = {
    kind: op.kind,
    backup_id: op.backup_id,
    target_env: targetEnvName,
    pre_restore_backup_id: op.pre_backup_id,
    state: op.state,
    phase: op.phase,
    bytes_read: Number(op.bytes_read),
    bytes_total: Number(op.bytes_total),
    create_time: op.create_time.toISOString(),
    update_time: op.update_time.toISOString(),
  };
  return {
    name: `operations/${op.id}`,
    done,
    metadata,
    ...(op.state === 'failed' && op.error ? { error: op.error } : {}),
    ...(op.state === 'succeeded'
      ? {
          response: {
            backup_id: op.backup_id,
            target_env: targetEnvName,
            pre_restore_backup_id: op.pre_backup_id,
            ...(op.kind === 'drill' && verification ? { verification } : {}),
            ...(op.kind === 'restore' && op.skipped ? { skipped: op.skipped } : {}),
          },
        }
      : {}),
  };
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
