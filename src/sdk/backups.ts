// Backups and storage for the SDK and the CLI. Method names follow the spec:
// `enableVersioning(bucket)`, `listVersions(bucket, key)`, `restoreVersion(bucket, key, versionId)`.
import { envPath, type CairnClient } from './client.ts';

import type {
  Backup,
  BackupSettings,
  BackupSettingsUpdate,
  BackupState,
  BackupUsage,
  Operation,
  RestorePreview,
  Verification,
} from '../contract/backups.ts';
import type { Bucket, ObjectVersion, ObjectWrite } from '../contract/storage.ts';

export type {
  Backup,
  BackupSettings,
  BackupSettingsUpdate,
  BackupState,
  BackupUsage,
  Bucket,
  ObjectVersion,
  ObjectWrite,
  Operation,
  RestorePreview,
  Verification,
};

const backupPath = (id: string): string => {
  if (!/^backup_[0-9a-z]{26}$/.test(id)) throw new Error(`"${id}" is not a backup id (backup_…)`);
  return `/v1/backups/${id}`;
};

export class BackupsApi {
  readonly client: CairnClient;

  constructor(client: CairnClient) {
    this.client = client;
  }

  create(envName: string): Promise<Backup> {
    return this.client.request('POST', `${envPath(envName)}/backups`, { body: { type: 'manual' } });
  }

  list(
    envName: string,
    options: { pageSize?: number; pageToken?: string } = {},
  ): Promise<{ backups: Backup[]; next_page_token?: string }> {
    return this.client.request('GET', `${envPath(envName)}/backups`, {
      query: { page_size: options.pageSize, page_token: options.pageToken },
    });
  }

  get(id: string): Promise<Backup> {
    return this.client.request('GET', backupPath(id));
  }

  /** Schedule, retention and drills of an environment's backups. */
  settings(envName: string): Promise<BackupSettings> {
    return this.client.request('GET', `${envPath(envName)}/backup_settings`);
  }

  /** Replaces them; `schedule_hour_utc` and `drill_schedule` left out keep their current values. */
  saveSettings(envName: string, settings: BackupSettingsUpdate): Promise<BackupSettings> {
    return this.client.request('PUT', `${envPath(envName)}/backup_settings`, { body: settings });
  }

  /** An expiring link to the decrypted .sql.gz that needs no key. */
  url(id: string, expiresInSeconds?: number): Promise<{ url: string; expire_time: string }> {
    return this.client.request('POST', `${backupPath(id)}:url`, {
      body: expiresInSeconds === undefined ? {} : { expires_in_seconds: expiresInSeconds },
    });
  }

  /** Deletes a backup that has ended, its stored object with it. */
  async delete(id: string): Promise<void> {
    await this.client.request('DELETE', backupPath(id));
  }

  /** The decrypted .sql.gz as a streamed Response (Content-Length set when known). */
  download(id: string): Promise<Response> {
    return this.client.fetch('GET', `${backupPath(id)}:download`, { headers: { accept: 'application/gzip' } });
  }

  /** The stored (encrypted) object; its sealed data key is in the `cairn-sealed-key` header (base64url JSON). */
  downloadSealed(id: string): Promise<Response> {
    return this.client.fetch('GET', `${backupPath(id)}:download`, { query: { sealed: 'true' } });
  }

  /** The restore's checks and plan without the restore (the same errors it would give). */
  previewRestore(id: string, targetEnv: string): Promise<RestorePreview> {
    return this.client.request('POST', `${backupPath(id)}:previewRestore`, { body: { targetEnv } });
  }

  /** Restores the latest succeeded backup into a scratch database and compares every table (a restore drill). */
  drill(envName: string): Promise<Operation> {
    return this.client.request('POST', `${envPath(envName)}/backups:drill`, { body: {} });
  }

  restore(id: string, targetEnv: string): Promise<Operation> {
    return this.client.request('POST', `${backupPath(id)}/restore`, { body: { targetEnv } });
  }

  operation(name: string): Promise<Operation> {
    const id = name.replace(/^operations\//, '');
    if (!/^op_[0-9a-z]{26}$/.test(id)) throw new Error(`"${name}" is not an operation name (operations/op_…)`);
    return this.client.request('GET', `/v1/operations/${id}`);
  }

  usage(envName: string): Promise<BackupUsage> {
    return this.client.request('GET', `${envPath(envName)}/backup_usage`);
  }

  /** Polls until the backup is no longer pending or running. */
  async waitForBackup(id: string, onPoll: (b: Backup) => void = () => undefined, intervalMs = 1000): Promise<Backup> {
    for (;;) {
      const b = await this.get(id);
      onPoll(b);
      if (b.state === 'succeeded' || b.state === 'failed') return b;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }

  /** Polls an operation until done. */
  async waitForOperation(
    name: string,
    onPoll: (op: Operation) => void = () => undefined,
    intervalMs = 1000,
  ): Promise<Operation> {
    for (;;) {
      const op = await this.operation(name);
      onPoll(op);
      if (op.done) return op;
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

export class StorageApi {
  readonly client: CairnClient;
  readonly envName: string;

  constructor(client: CairnClient, envName: string) {
    this.client = client;
    this.envName = envName;
  }

  private bucketPath(bucket: string): string {
    return `${envPath(this.envName)}/buckets/${encodeURIComponent(bucket)}`;
  }

  /** Keys travel as one URL-encoded path segment ("/" as %2F). */
  private objectPath(bucket: string, key: string): string {
    return `${this.bucketPath(bucket)}/objects/${encodeURIComponent(key)}`;
  }

  createBucket(name: string): Promise<Bucket> {
    return this.client.request('POST', `${envPath(this.envName)}/buckets`, { body: { name } });
  }

  listBuckets(): Promise<{ buckets: Bucket[] }> {
    return this.client.request('GET', `${envPath(this.envName)}/buckets`);
  }

  put(
    bucket: string,
    key: string,
    body: RequestInit['body'],
    contentType = 'application/octet-stream',
  ): Promise<ObjectWrite> {
    return this.client.request('PUT', this.objectPath(bucket, key), { rawBody: body, contentType });
  }

  /** The object's content as a Response; `versionId` reads an older version. */
  get(bucket: string, key: string, versionId?: string): Promise<Response> {
    return this.client.fetch('GET', this.objectPath(bucket, key), {
      query: { version_id: versionId },
      headers: { accept: '*/*' },
    });
  }

  delete(bucket: string, key: string, versionId?: string): Promise<ObjectWrite> {
    return this.client.request('DELETE', this.objectPath(bucket, key), { query: { version_id: versionId } });
  }

  enableVersioning(bucket: string): Promise<Bucket> {
    return this.client.request('POST', `${this.bucketPath(bucket)}:enableVersioning`);
  }

  /** Versions and delete markers, newest first. */
  async listVersions(bucket: string, key: string): Promise<ObjectVersion[]> {
    const out = await this.client.request<{ versions: ObjectVersion[] }>(
      'GET',
      `${this.objectPath(bucket, key)}:listVersions`,
    );
    return out.versions;
  }

  restoreVersion(bucket: string, key: string, versionId: string): Promise<ObjectWrite> {
    return this.client.request('POST', `${this.objectPath(bucket, key)}:restoreVersion`, { body: { versionId } });
  }
}
