// Cuts a stream of chunks into parts of exactly `partSize` bytes (the last may be shorter), for
// multipart uploads. One part is assembled at a time, so memory is one part plus one chunk.
export async function* collectParts(source: AsyncIterable<Buffer>, partSize: number): AsyncGenerator<Buffer> {
  let chunks: Buffer[] = [];
  let length = 0;
  let yielded = false;
  for await (const chunk of source) {
    let rest = chunk;
    while (length + rest.length >= partSize) {
      const need = partSize - length;
      chunks.push(rest.subarray(0, need));
      yield Buffer.concat(chunks, partSize);
      yielded = true;
      chunks = [];
      length = 0;
      rest = rest.subarray(need);
    }
    if (rest.length > 0) {
      chunks.push(rest);
      length += rest.length;
    }
  }
  // An empty stream is still one (empty) part: a multipart upload needs at least one.
  if (length > 0 || !yielded) yield Buffer.concat(chunks, length);
}
