// Proves the test S3 server (radosgw from scripts/provision.sh) does what the storage and backup
// code relies on: versioning, GET by VersionId, version listing, multipart upload.
// Run: node scripts/s3-smoke.ts   (the test server on 127.0.0.1:7480 with the keys provision.sh
// creates; with AWS_ENDPOINT_URL_S3 set, that server with the AWS_* region and keys)
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';

// The caller's AWS_* variables count only with their own endpoint: keys meant for AWS itself
// must not be sent to the test server.
const env = process.env.AWS_ENDPOINT_URL_S3 ? process.env : {};
const s3 = new S3Client({
  endpoint: env.AWS_ENDPOINT_URL_S3 ?? 'http://127.0.0.1:7480',
  region: env.AWS_REGION ?? 'us-east-1',
  forcePathStyle: true,
  credentials: {
    accessKeyId: env.AWS_ACCESS_KEY_ID ?? 'cairn-test',
    secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? 'cairn-test-secret-key',
  },
  // radosgw 16 rejects the SDK's default streaming checksum trailers (aws-chunked uploads).
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});

const bucket = `cairn-smoke-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
const key = 'note.txt';

async function body(versionId?: string): Promise<string> {
  const res = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key, VersionId: versionId }));
  return (await res.Body?.transformToString()) ?? '';
}

async function emptyAndDelete(): Promise<void> {
  for (;;) {
    const list = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket }));
    const ids = [...(list.Versions ?? []), ...(list.DeleteMarkers ?? [])].map((v) => ({
      Key: v.Key,
      VersionId: v.VersionId,
    }));
    if (ids.length === 0) break;
    await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: ids, Quiet: true } }));
  }
  await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
}

async function main(): Promise<void> {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  try {
    await s3.send(new PutBucketVersioningCommand({ Bucket: bucket, VersioningConfiguration: { Status: 'Enabled' } }));

    const v1 = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'first' }));
    const v2 = await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'second' }));
    assert.ok(v1.VersionId && v2.VersionId && v1.VersionId !== v2.VersionId, 'two distinct version ids');
    assert.equal(await body(), 'second', 'latest GET returns the newest content');
    assert.equal(await body(v1.VersionId), 'first', 'GET by VersionId returns the old content');

    const versions = (await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: key }))).Versions ?? [];
    assert.deepEqual(
      versions.map((v) => [v.VersionId, v.IsLatest]),
      [
        [v2.VersionId, true],
        [v1.VersionId, false],
      ],
      'versions listed newest first, only the newest IsLatest',
    );

    const big = randomBytes(12 * 1024 * 1024);
    const upload = new Upload({
      client: s3,
      params: { Bucket: bucket, Key: 'big.bin', Body: big },
      partSize: 5 * 1024 * 1024,
    });
    await upload.done();
    // CompleteMultipartUpload's ETag is empty on radosgw; HEAD has the real one.
    const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'big.bin' }));
    assert.equal(head.ContentLength, big.length, 'multipart object has the full length');
    assert.match(head.ETag ?? '', /-3"$/, 'multipart ETag names 3 parts');
    const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: 'big.bin' }));
    const bytes = Buffer.from((await got.Body?.transformToByteArray()) ?? []);
    assert.ok(bytes.equals(big), 'multipart object reads back byte for byte');
  } finally {
    await emptyAndDelete();
  }
  console.log('s3 smoke ok');
}

main().catch((err: unknown) => {
  console.error('s3 smoke FAILED:', err);
  process.exitCode = 1;
});
