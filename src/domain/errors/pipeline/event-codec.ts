// The event codec: the one owner of a stored event's form. A body at rest is its JSON as a raw
// deflate stream (RFC 1951) in a bytea column.
// Sentry's nodestore keeps event payloads zlib-compressed for the same reason. Postgres never looks
// inside a body (reads return it whole; every filter is on a plain column), and parsing it into
// jsonb and compressing it with pglz was most of Postgres's cost per stored event: measured here on
// a 15.7 KB processed event (30 frames with context lines), 0.39-0.41 ms of Postgres CPU per event
// as jsonb against 0.05-0.07 ms as deflated bytea.
//
// A body is three segments of one stream. A raw deflate stream is any sequence of blocks, so parts
// made apart join into one valid stream (what pigz does to compress in parallel):
//   1. `{"stack":"<message lines>` — the event's own, in a stored (uncompressed) block;
//   2. `<frame lines>","stack_frames":[…],` — the stack's, deflated once per stack (the worker's
//      StackCache keeps it) and ended with a sync flush, so it is whole bytes and not the last block;
//   3. `"event_time":…}` — the rest of the event's own, in a stored block that ends the stream.
// An event thus costs no compression at all when its stack recurred: a zlib handle per event cost
// ~50 µs of CPU and, freed only by GC, held the worker's peak memory ~60 MB higher.
import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';
import { deflateMemory } from '../deflate.ts';
import type { EventBody } from '../../../contract/error-event.ts';

/** The body but its stack's parts: what an event brings of its own. */
export type EventHead = Omit<EventBody, 'stack_frames' | 'stack'>;

/** JSON string contents (no quotes): JSON escapes per character, so escaped parts concatenate. */
const inner = (text: string): string => JSON.stringify(text).slice(1, -1);

/** RFC 1951 §3.2.4 stored blocks: the bytes as they are, at most 65,535 to a block. */
function stored(text: string, final: boolean): Buffer {
  const data = Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  let offset = 0;
  do {
    const chunk = data.subarray(offset, offset + 65_535);
    offset += chunk.length;
    const header = Buffer.alloc(5);
    header[0] = final && offset >= data.length ? 1 : 0; // BFINAL, BTYPE 00; the rest pads to the byte
    header.writeUInt16LE(chunk.length, 1);
    header.writeUInt16LE(~chunk.length & 0xffff, 3);
    parts.push(header, chunk);
  } while (offset < data.length);
  return Buffer.concat(parts);
}

/**
 * Makes segment 2. One per worker (the pipeline's caches hold it): the text to deflate is written
 * into one reused buffer, since a fresh one per stack (tens of KB, outside the V8 heap, freed only
 * by a GC) held the worker's peak memory tens of MB higher when many new stacks came at once (a
 * new release), measured with bench/errors.ts's memory part.
 */
export class StackEncoder {
  private scratch = Buffer.allocUnsafe(64 * 1024);

  /**
   * Segment 2: the stack's frame lines (scrubbed; undefined when the event has no stack text), its
   * frames, and `extra`: more members the stack alone decides, each `"name":value,`.
   */
  framesSegment(frameJsons: readonly string[], frameLines: string | undefined, extra = ''): Buffer {
    const lines = frameLines === undefined ? '' : `${inner(frameLines)}",`;
    const text = `${lines}"stack_frames":[${frameJsons.join(',')}],${extra}`;
    const size = Buffer.byteLength(text);
    if (size > this.scratch.length) this.scratch = Buffer.allocUnsafe(size);
    this.scratch.write(text);
    return deflateRawSync(this.scratch.subarray(0, size), {
      level: 1,
      ...deflateMemory(size),
      chunkSize: 4096,
      finishFlush: constants.Z_SYNC_FLUSH,
    });
  }
}

/**
 * The stored body: segments 1 and 3 around the stack's segment. `messageLines` is the scrubbed
 * stack text before its frame lines, undefined when the event has no stack text (as for
 * framesSegment, which must agree).
 */
export function packBody(segment: Buffer, messageLines: string | undefined, head: EventHead): Buffer {
  const opening = messageLines === undefined ? '{' : `{"stack":"${inner(messageLines)}`;
  // `"event_time":…}` (a head always has its event_time): segment 1 opened the object.
  return Buffer.concat([stored(opening, false), segment, stored(JSON.stringify(head).slice(1), true)]);
}

/** A stored body back to the event it holds. */
export function unpackBody(bodyDeflated: Buffer): EventBody {
  return JSON.parse(inflateRawSync(bodyDeflated).toString('utf8')) as EventBody;
}
