// The object-store contract against the local-disk driver (`npm start` without an object store).
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiskObjectStore } from '../../src/storage/disk.ts';
import { objectStoreContract } from './contract.ts';

objectStoreContract('disk', async () => {
  const root = mkdtempSync(join(tmpdir(), 'cairn-disk-'));
  return { store: new DiskObjectStore(root), bucket: () => `b-${randomBytes(6).toString('hex')}` };
});
