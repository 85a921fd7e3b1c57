// Backups and storage for the SDK and the CLI. Method names follow the spec:
// `enableVersioning(bucket)`, `listVersions(bucket, key)`, `restoreVersion(bucket, key, versionId)`.
import { envPath, type CairnClient } from './client.ts';

export type BackupState = 'pending' | 'running' | 'succeeded' | 'failed';

export interface Backup {
  id: string;
  state: BackupState;
  type: 'daily' | 'weekly' | 'monthly' | 'manual';
  trigger: 'schedule' | 'manual' | 'pre_restore';
  key: string;
  size_bytes: number | null;
  sha256: string | null;
  billable: boolean;
  duration_ms: number | null;
  pg_version: string | null;
  pg_dump_version: string | null;
  encryption: { format: string; algorithm: string; key_id: string } | null;
  error: string | null;
  /** When the latest restore drill of this backup ran, and its verdict. */
  verified_time: string | null;
  verification: Verification | null;
  create_time: string;
  start_time: string | null;
  finish_time: string | null;
  expire_time: string;
}

export interface Verification {
  result: 'passed' | 'failed';
  reason?: string;
}

export interface Operation {
  name: string;
  done: boolean;
  metadata: {
    kind: 'restore' | 'drill';
    backup_id: string | null;
    target_env: string;
    pre_restore_backup_id: string | null;
    state: BackupState;
    phase: string | null;
    bytes_read: number;
    bytes_total: number;
  };
  error?: { code: string; message: string };
  response?: {
    backup_id: string | null;
    target_env: string;
    pre_restore_backup_id: string | null;
    verification?: Verification;
  };
}

/** What a restore would replace (`previewRestore`): checked like the restore, nothing changed. */
export interface RestorePreview {
  backup: Backup;
  target_env: string;
  target_mode: 'test' | 'live';
  /** What the restore would replace (the target's tables with row estimates); never where the database lives. */
  replaces: {
    tables: { name: string; estimated_rows: number | null }[];
    table_count: number;
    estimated_rows: number;
  } | null;
  replaces_unknown?: string;
}

export interface BackupUsage {
  date: string;
  manual_today: number;
  free_left: number;
  billable_today: number;
  stored_bytes: number;
  stored_gb: number;
  monthly_estimate_usd: number;
}

export interface ObjectVersion {
  versionId: string;
  lastModified: string;
  isLatest: boolean;
  isDeleteMarker: boolean;
  size: number;
  etag?: string;
}

export interface Bucket {
  name: string;
  bucket: string;
  versioning: 'disabled' | 'enabled';
  create_time: string;
}

export interface ObjectWrite {
  key: string;
  size?: number;
  versionId?: string;
  deleteMarker?: boolean;
  restoredFrom?: string;
}

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

  /** The decrypted .sql.gz as a streamed Response (Content-Length set when known). */
  download(id: string): Promise<Response> {
    return this.client.fetch('GET', `${backupPath(id)}:download`, { headers: { accept: 'application/gzip' } });
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
