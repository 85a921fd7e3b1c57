// One behaviour for every ObjectStore driver ("one contract test suite runs against
// both"): the S3 driver against radosgw and the disk driver behind `npm start` must agree.
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAll, type ObjectStore } from '../../src/storage/object-store.ts';

async function text(store: ObjectStore, bucket: string, key: string, versionId?: string): Promise<string | undefined> {
  const got = await store.get(bucket, key, versionId ? { versionId } : {});
  return got ? (await readAll(got.body)).toString() : undefined;
}

async function* chunks(parts: Buffer[], failAfter?: number): AsyncGenerator<Buffer> {
  for (const [i, p] of parts.entries()) {
    if (failAfter !== undefined && i === failAfter) throw new Error('source failed');
    yield p;
  }
}

export function objectStoreContract(
  name: string,
  make: () => Promise<{ store: ObjectStore; bucket: () => string }>,
): void {
  describe(`ObjectStore contract: ${name}`, () => {
    let store: ObjectStore;
    let newBucket: () => string;
    const made: string[] = [];
    const bucket = async (versioned = false): Promise<string> => {
      const b = newBucket();
      made.push(b);
      await store.ensureBucket(b);
      if (versioned) await store.enableVersioning(b);
      return b;
    };

    beforeAll(async () => {
      ({ store, bucket: newBucket } = await make());
    });
    afterAll(async () => {
      for (const b of made) await store.deleteBucket(b);
    });

    it('puts, gets, lists and deletes an unversioned object', async () => {
      const b = await bucket();
      await store.put(b, 'a/one.txt', 'first', { metadata: { 'cairn-x': 'y' }, contentType: 'text/plain' });
      await store.put(b, 'a/one.txt', 'second');
      expect(await text(store, b, 'a/one.txt')).toBe('second');
      expect((await store.list(b, 'a/')).map((o) => o.key)).toEqual(['a/one.txt']);
      const versions = await store.listVersions(b, 'a/one.txt');
      expect(versions.map((v) => [v.versionId, v.isLatest])).toEqual([['null', true]]);
      await store.delete(b, 'a/one.txt');
      expect(await store.get(b, 'a/one.txt')).toBeUndefined();
    });

    it('streams a body of unknown length into one object and keeps metadata', async () => {
      const b = await bucket();
      const parts = [Buffer.alloc(3 * 1024 * 1024, 1), Buffer.alloc(3 * 1024 * 1024, 2), Buffer.from('end')];
      const out = await store.putStream(b, 'big.bin', chunks(parts), {
        partSize: 5 * 1024 * 1024,
        metadata: { 'cairn-format': 'test' },
      });
      expect(out.size).toBe(6 * 1024 * 1024 + 3);
      const got = await store.get(b, 'big.bin');
      expect(got?.metadata['cairn-format']).toBe('test');
      expect((await readAll(got!.body)).equals(Buffer.concat(parts))).toBe(true);
      expect(await store.listIncompleteUploads(b, '')).toEqual([]);
    });

    it('leaves no object and no unfinished upload when the source fails', async () => {
      const b = await bucket();
      const parts = [Buffer.alloc(6 * 1024 * 1024, 1), Buffer.alloc(1024, 2)];
      await expect(store.putStream(b, 'broken.bin', chunks(parts, 1), { partSize: 5 * 1024 * 1024 })).rejects.toThrow(
        'source failed',
      );
      expect(await store.head(b, 'broken.bin')).toBeUndefined();
      expect(await store.listIncompleteUploads(b, '')).toEqual([]);
    });

    it('keeps every version once versioning is on, newest first, with the null version', async () => {
      const b = await bucket();
      await store.put(b, 'doc.txt', 'v0 before versioning');
      await store.enableVersioning(b);
      const v1 = await store.put(b, 'doc.txt', 'v1');
      const v2 = await store.put(b, 'doc.txt', 'v2');
      await store.put(b, 'doc.txt.other', 'a neighbour sharing the prefix');
      expect(v1.versionId).toBeTruthy();
      const versions = await store.listVersions(b, 'doc.txt');
      expect(versions.map((v) => v.versionId)).toEqual([v2.versionId, v1.versionId, 'null']);
      expect(versions.map((v) => v.isLatest)).toEqual([true, false, false]);
      expect(await text(store, b, 'doc.txt')).toBe('v2');
      expect(await text(store, b, 'doc.txt', v1.versionId)).toBe('v1');
      expect(await text(store, b, 'doc.txt', 'null')).toBe('v0 before versioning');
    });

    it('hides a deleted object behind a delete marker and restores an older version as a new one', async () => {
      const b = await bucket(true);
      const v1 = await store.put(b, 'k', 'one');
      await store.put(b, 'k', 'two');
      const del = await store.delete(b, 'k');
      expect(del).toMatchObject({ deleteMarker: true });
      expect(await store.get(b, 'k')).toBeUndefined();
      expect(await store.list(b, '')).toEqual([]);
      const withMarker = await store.listVersions(b, 'k');
      expect(withMarker[0]).toMatchObject({ isLatest: true, isDeleteMarker: true });
      await expect(store.restoreVersion(b, 'k', withMarker[0]!.versionId)).rejects.toMatchObject({
        code: 'invalid_request',
      });
      await expect(store.restoreVersion(b, 'k', 'no-such-version')).rejects.toMatchObject({ code: 'not_found' });

      const restored = await store.restoreVersion(b, 'k', v1.versionId!);
      expect(restored.versionId).toBeTruthy();
      expect(restored.versionId).not.toBe(v1.versionId);
      expect(await text(store, b, 'k')).toBe('one');
      const after = await store.listVersions(b, 'k');
      expect(after).toHaveLength(4);
      expect(after[0]).toMatchObject({ versionId: restored.versionId, isLatest: true, isDeleteMarker: false });
      expect(after.filter((v) => v.isLatest)).toHaveLength(1);
    });

    it('deletes one version permanently when asked by id', async () => {
      const b = await bucket(true);
      const v1 = await store.put(b, 'k', 'one');
      const v2 = await store.put(b, 'k', Readable.from([Buffer.from('two')]));
      await store.delete(b, 'k', { versionId: v2.versionId! });
      expect(await text(store, b, 'k')).toBe('one');
      expect((await store.listVersions(b, 'k')).map((v) => v.versionId)).toEqual([v1.versionId]);
    });
  });
}
