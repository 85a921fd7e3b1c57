// A stored event's body at rest: its JSON, deflated (raw, level 1) in a bytea column. Sentry's
// nodestore keeps event payloads zlib-compressed for the same reason. Postgres never looks inside
// a body (reads return it whole; every filter is on a plain column), and parsing it into jsonb and
// compressing it with pglz was most of Postgres's cost per stored event: measured here on a
// 15.7 KB processed event (30 frames with context lines), 0.39-0.41 ms of Postgres CPU per event as
// jsonb against 0.05-0.07 ms as deflated bytea (2.2 KB). Deflating costs the worker about 50 µs.
// Rows stored before 20261121200000 keep their jsonb `body`; reads take whichever is set.
import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';
import type { EventBody } from './process.ts';

/**
 * The first part of a stored body: `{"stack_frames":[…],` deflated and ended with a sync flush, so
 * that it is whole bytes and not the stream's last block. A raw deflate stream is any sequence of
 * blocks, so this segment followed by another compressed on its own is one valid stream (what
 * pigz does to compress in parallel). A stack recurs from event to event; its segment is made once
 * (process.ts), and each event compresses only its own part.
 */
export function framesSegment(frameJsons: readonly string[]): Buffer {
  return deflateRawSync(`{"stack_frames":[${frameJsons.join(',')}],`, { level: 1, finishFlush: constants.Z_SYNC_FLUSH });
}

/** The stored body: the frames' segment, then the rest of the body, which ends the stream. */
export function packBody(segment: Buffer, head: Omit<EventBody, 'stack_frames'>): Buffer {
  // `"event_time":…}` (a head always has its event_time): the segment opened the object.
  return Buffer.concat([segment, deflateRawSync(JSON.stringify(head).slice(1), { level: 1 })]);
}

/** The stored columns: `body_deflated` for rows from the workers, `body` (jsonb) for older ones. */
export interface StoredBody {
  body: EventBody | null;
  body_deflated: Buffer | null;
}

export function unpackBody(row: StoredBody): EventBody {
  if (row.body_deflated) return JSON.parse(inflateRawSync(row.body_deflated).toString('utf8')) as EventBody;
  if (row.body) return row.body;
  throw new Error('a stored error event has no body');
}
