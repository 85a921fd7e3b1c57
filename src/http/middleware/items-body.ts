// The body reader of a route with `bodyItems` (route.ts): the bytes are read once, within the
// process's budget for large bodies (body-budget.ts), and split into items that the handler
// parses one at a time (json-items.ts). A body of any other shape or type gets the ordinary JSON
// parser's answer.
import type { Middleware } from 'koa';
import inflate from 'inflation';
import type { Readable } from 'node:stream';
import { AppError } from '../../errors.ts';
import { largeBodies } from '../body-budget.ts';
import { BodyBuffers, type BodyLease } from '../body-buffers.ts';
import { parseWhole, splitJsonItems } from '../json-items.ts';

/** How long a body waits for the budget before the client is told to retry. */
const budgetWaitMs = 10_000;

/** Buffers for declared lengths, reused: at most one budget's worth kept spare. */
const bodyBuffers = new BodyBuffers(largeBodies.capacity);

/**
 * The body's bytes, into the lease's buffer when the length is declared (collecting chunks and
 * joining them would hold a 20 MiB body twice at the end). More bytes than declared, or than the
 * limit, is refused as soon as it arrives.
 */
async function readBody(stream: Readable, limit: number, lease: BodyLease | undefined): Promise<Buffer> {
  const whole = lease?.buffer;
  const chunks: Buffer[] = [];
  let received = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (received + chunk.length > limit)
        throw new AppError('invalid_request', 'the request body is too large', { status: 413 });
      if (whole && received + chunk.length > whole.length) break;
      if (whole) chunk.copy(whole, received);
      else chunks.push(chunk);
      received += chunk.length;
    }
  } catch (err) {
    // A decoding failure keeps its zlib code (errors.ts says what it means); a lost client has gone.
    if (err instanceof AppError || (err as { code?: string }).code?.startsWith('Z_')) throw err;
    throw new AppError('invalid_request', 'the request body did not arrive whole');
  }
  if (whole && received !== whole.length)
    throw new AppError('invalid_request', 'the request body does not match its Content-Length');
  return whole ?? Buffer.concat(chunks, received);
}

export function itemsBody(items: { key: string; max: number }, limit: number, otherwise: Middleware): Middleware {
  return async (ctx, next) => {
    if (!ctx.request.is('application/json')) return otherwise(ctx, next);
    const encoding = ctx.get('content-encoding') || 'identity';
    const lengthHeader = ctx.get('content-length');
    const declared = encoding === 'identity' && lengthHeader !== '' ? Number(lengthHeader) : undefined;
    // A declared length over the limit is refused before it costs any budget or any read.
    if (declared !== undefined && declared > limit)
      throw new AppError('invalid_request', 'the request body is too large', { status: 413 });
    const release = await largeBodies.take(declared ?? limit, budgetWaitMs);
    const lease = declared !== undefined ? bodyBuffers.lend(declared) : undefined;
    try {
      // Decoded as the ordinary parser decodes (co-body uses inflation): the same encodings, the same 415.
      const bytes = await readBody(inflate(ctx.req), limit, lease);
      const split = await splitJsonItems(bytes, items.key, items.max, lease);
      (ctx.request as { body?: unknown }).body = split ? { [items.key]: split } : parseWhole(bytes);
      await next();
    } finally {
      // The items go with the buffer: nothing reads a request's body once it has been answered.
      (ctx.request as { body?: unknown }).body = undefined;
      lease?.giveBack();
      release();
    }
  };
}
