import type { Config } from '../config.ts';
import { DiskObjectStore } from './disk.ts';
import type { ObjectStore } from './object-store.ts';
import { createS3Client, S3ObjectStore } from './s3.ts';

export type { ObjectStore } from './object-store.ts';

/** S3 when an endpoint or credentials are configured; the local disk when `npm start` chose it. */
export function createObjectStore(config: Config): ObjectStore {
  if (config.CAIRN_LOCAL_OBJECT_DIR && !config.AWS_ENDPOINT_URL_S3)
    return new DiskObjectStore(config.CAIRN_LOCAL_OBJECT_DIR);
  return new S3ObjectStore(createS3Client(config));
}
