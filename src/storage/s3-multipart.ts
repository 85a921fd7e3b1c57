// The S3 driver's streamed writes (s3.ts): our own multipart loop rather than lib-storage, so the
// upload exists from the first byte (a killed writer's upload is findable by prefix and aborted),
// at most `queueSize` parts are in flight, and their buffers are reused, so memory is
// (queueSize + 1) parts whatever the length.
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import type { PutResult, StreamPutOptions } from './object-store.ts';
import { collectParts } from './parts.ts';

export async function multipartPut(
  client: S3Client,
  bucket: string,
  key: string,
  source: AsyncIterable<Buffer>,
  options: StreamPutOptions = {},
): Promise<PutResult & { size: number }> {
  const partSize = Math.max(options.partSize ?? 8 * 1024 * 1024, 5 * 1024 * 1024);
  const queueSize = 2;
  const created = await client.send(
    new CreateMultipartUploadCommand({
      Bucket: bucket,
      Key: key,
      ContentType: options.contentType,
      Metadata: options.metadata,
    }),
  );
  const uploadId = created.UploadId!;
  const parts: { PartNumber: number; ETag: string }[] = [];
  const inFlight = new Set<Promise<void>>();
  const free: Buffer[] = [];
  // A part that fails while we read the source is remembered here, never left unhandled.
  const failures: unknown[] = [];
  let size = 0;
  try {
    let number = 0;
    for await (const body of collectParts(source, partSize, () => free.pop() ?? Buffer.allocUnsafeSlow(partSize))) {
      if (failures.length > 0) throw failures[0];
      size += body.length;
      const partNumber = ++number;
      const md5 = createHash('md5').update(body).digest('base64');
      const p: Promise<void> = client
        .send(
          new UploadPartCommand({
            Bucket: bucket,
            Key: key,
            UploadId: uploadId,
            PartNumber: partNumber,
            Body: body,
            ContentMD5: md5,
          }),
        )
        .then(
          (out) => {
            parts.push({ PartNumber: partNumber, ETag: out.ETag! });
            if (body.length === partSize) free.push(body);
          },
          (err: unknown) => {
            failures.push(err);
          },
        )
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
      while (inFlight.size >= queueSize) await Promise.race(inFlight);
      if (failures.length > 0) throw failures[0];
    }
    await Promise.all(inFlight);
    if (failures.length > 0) throw failures[0];
    parts.sort((a, b) => a.PartNumber - b.PartNumber);
    const done = await client.send(
      new CompleteMultipartUploadCommand({
        Bucket: bucket,
        Key: key,
        UploadId: uploadId,
        MultipartUpload: { Parts: parts },
      }),
    );
    return { etag: done.ETag || undefined, versionId: done.VersionId, size };
  } catch (err) {
    await Promise.allSettled(inFlight);
    await client
      .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }))
      .catch(() => undefined);
    throw err;
  }
}
