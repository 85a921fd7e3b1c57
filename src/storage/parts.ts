// Cuts a stream of chunks into parts of exactly `partSize` bytes (the last may be shorter), for
// multipart uploads. Each part is filled into a buffer from `take`, so a caller that gives its
// buffers back (the S3 driver keeps a pool of queue size + 1) allocates nothing per part: the
// memory is those few buffers, however long the stream.
export async function* collectParts(
  source: AsyncIterable<Buffer>,
  partSize: number,
  take: () => Buffer = () => Buffer.allocUnsafe(partSize),
): AsyncGenerator<Buffer> {
  // Taken lazily, after the consumer resumes us, so a pool has had the chance to refill.
  let part: Buffer | undefined;
  let filled = 0;
  let yielded = false;
  for await (const chunk of source) {
    let offset = 0;
    while (offset < chunk.length) {
      part ??= take();
      const n = chunk.copy(part, filled, offset, Math.min(chunk.length, offset + partSize - filled));
      filled += n;
      offset += n;
      if (filled === partSize) {
        const full = part;
        part = undefined;
        filled = 0;
        yielded = true;
        yield full;
      }
    }
  }
  // An empty stream is still one (empty) part: a multipart upload needs at least one.
  if (filled > 0 || !yielded) yield (part ?? Buffer.alloc(0)).subarray(0, filled);
}
