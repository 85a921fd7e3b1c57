// The JSON body of a /v1 route: read within the route's limit (413 past it), decoded as sent
// (gzip, deflate, br; 415 for another encoding), checked for nesting and size before it is parsed
// (json-limits.ts: nothing recurses over a body deeper than 64 levels, and no body becomes more
// than a million objects), then parsed with the prototype-poisoning rule (a `__proto__` key is
// refused). It answers what @koa/bodyparser answered before it: only POST, PUT and PATCH bodies of
// a JSON type are read, an empty or non-JSON-typed body is `{}`, a body that is not an object or
// an array is not valid JSON, and a UTF-8 byte order mark is ignored (RFC 8259 §8.1).
import type { Middleware } from 'koa';
import inflate from 'inflation';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { AppError } from '../../app-error.ts';
import type { BodyLease } from '../body-buffers.ts';
import { discardRest } from '../discard-body.ts';
import { parseWhole } from '../json-items.ts';

const jsonTypes = ['application/json', 'application/*+json', 'application/csp-report'];
const methods = new Set(['POST', 'PUT', 'PATCH']);

/**
 * The body's bytes, decoded as co-body decoded them (inflation: the same encodings, the same 415
 * for another), into the lease's buffer when the length is declared (collecting chunks and joining
 * them would hold a 20 MiB body twice at the end). More bytes than declared, or than the limit, is
 * refused as soon as it arrives, and the rest is dropped unread (discard-body.ts).
 */
export async function readBody(req: IncomingMessage, limit: number, lease?: BodyLease): Promise<Buffer> {
  const stream: Readable = inflate(req);
  const refuse = (err: AppError | Error): never => {
    if (stream !== req) {
      req.unpipe();
      stream.destroy();
    }
    discardRest(req, limit);
    throw err;
  };
  const whole = lease?.buffer;
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      if (received + chunk.length > limit)
        throw new AppError('invalid_request', 'the request body is too large', { status: 413 });
      if (whole && received + chunk.length > whole.length) break;
      if (whole) chunk.copy(whole, received);
      else chunks.push(chunk);
      received += chunk.length;
    }
  } catch (err) {
    // A decoding failure keeps its zlib code (errors.ts says what it means); a lost client has gone.
    if (err instanceof AppError || (err as { code?: string }).code?.startsWith('Z_')) refuse(err as Error);
    refuse(new AppError('invalid_request', 'the request body did not arrive whole'));
  }
  if (whole && received !== whole.length)
    refuse(new AppError('invalid_request', 'the request body does not match its Content-Length'));
  return whole ?? Buffer.concat(chunks, received);
}

const bom = Buffer.from([0xef, 0xbb, 0xbf]);

export function jsonBody(limit: number): Middleware {
  return async (ctx, next) => {
    const request = ctx.request as { body?: unknown };
    if (!methods.has(ctx.method) || request.body !== undefined) return next();
    if (!ctx.request.is(jsonTypes)) {
      request.body = {};
      return next();
    }
    // A declared length over the limit is refused before anything is read.
    const declared = Number(ctx.get('content-length') || Number.NaN);
    if ((ctx.get('content-encoding') || 'identity') === 'identity' && declared > limit)
      throw new AppError('invalid_request', 'the request body is too large', { status: 413 });
    const bytes = await readBody(ctx.req, limit);
    request.body = parseWhole(bytes.subarray(0, 3).equals(bom) ? bytes.subarray(3) : bytes);
    return next();
  };
}
