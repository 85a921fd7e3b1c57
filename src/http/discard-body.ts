// A request body refused midway (a limit, a bad key, a malformed part) is not read any further,
// but it is not left in the socket either: its remaining bytes are read and dropped as they arrive,
// so the answer reaches the client instead of a connection reset (destroying the request stream
// destroys its socket under the answer). A client that keeps sending past what the route would
// ever have read loses the connection.
import type { IncomingMessage } from 'node:http';

/** Drops the rest of `req`; past `left` more bytes the connection is closed. */
export function discardRest(req: IncomingMessage, left: number): void {
  if (req.readableEnded || req.destroyed) return;
  req.on('data', (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) req.destroy();
  });
  req.resume();
}
