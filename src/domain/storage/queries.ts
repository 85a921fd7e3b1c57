// SQL for application storage buckets. A bucket belongs to one environment; its S3 bucket name
// is derived from the row id, never from user input.
import type { Db } from '../../db.ts';

export interface BucketRow {
  id: string;
  env_id: string;
  name: string;
  s3_bucket: string;
  versioning: 'disabled' | 'enabled';
  create_time: Date;
}

export function storageQueries(db: Db) {
  return {
    async insert(row: Omit<BucketRow, 'create_time' | 'versioning'>): Promise<BucketRow> {
      const [inserted] = await db('storage_buckets').insert(row).returning('*');
      return inserted as BucketRow;
    },
    async byName(envId: string, name: string): Promise<BucketRow | undefined> {
      return db('storage_buckets').where({ env_id: envId, name }).first();
    },
    async list(envId: string): Promise<BucketRow[]> {
      return db('storage_buckets').where({ env_id: envId }).orderBy('name').select();
    },
    async setVersioning(id: string, versioning: BucketRow['versioning']): Promise<void> {
      await db('storage_buckets').where({ id }).update({ versioning });
    },
  };
}
