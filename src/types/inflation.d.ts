// inflation (the body decoder co-body uses) ships no types.
declare module 'inflation' {
  import type { Readable } from 'node:stream';
  /** The stream decoded as its Content-Encoding says; throws (status 415) for one it does not know. */
  export default function inflate(stream: Readable, options?: { encoding?: string }): Readable;
}
