// The object-store contract against the real S3 server (radosgw, scripts/provision.sh).
import { randomBytes } from 'node:crypto';
import { createS3Client, S3ObjectStore } from '../../src/storage/s3.ts';
import { testConfig } from '../support/config.ts';
import { objectStoreContract } from './contract.ts';

objectStoreContract('s3', async () => {
  const config = testConfig(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  return {
    store: new S3ObjectStore(createS3Client(config)),
    bucket: () => `cairn-ct-${randomBytes(6).toString('hex')}`,
  };
});
