// What backup code needs from its process, and the small pure rules shared by its parts.
import type { Knex } from 'knex';
import type { Config } from '../../config.ts';
import type { AnyJobs as Jobs } from '../../jobs/index.ts';
import type { BackupJobs } from './queues.ts';
import type { Logger } from '../../log.ts';
import type { ObjectStore } from '../../storage/object-store.ts';
import type { BackupType, RetentionDays } from './queries.ts';

export interface BackupDeps {
  config: Config;
  db: Knex;
  store: ObjectStore;
  log: Logger;
  /** Webhook events are written with a backup's or a restore's end (settle.ts). */
  jobs: Jobs;
  /** The worker's stop signal (SIGTERM); absent outside a worker. */
  stopping?: AbortSignal;
}

/** What the API's requests need: they write rows and enqueue jobs, in one transaction. */
export interface ServiceDeps {
  config: Config;
  db: Knex;
  jobs: Enqueuer;
}

export type Enqueuer = Pick<BackupJobs, 'enqueue'>;

export function retentionFor(days: RetentionDays, type: BackupType): number {
  return days[type];
}

/** docs/api.md "Resources", Backup: `backups/db/{appId}/{envId}/{timestamp}.sql.gz`, the timestamp in ISO 8601 (UTC). */
export function backupObjectKey(appId: string, envId: string, at: Date): string {
  return `backups/db/${appId}/${envId}/${at.toISOString()}.sql.gz`;
}

/** docs/api.md "Limits": manual backups are free up to ten a day; restores are free. */
export const freeManualPerDay = 10;
/** docs/api.md "Limits": 0.025 USD per GB-month, GB = 2^30 bytes as S3 bills it. */
export const usdPerGbMonth = 0.025;

export function startOfUtcDay(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
}
