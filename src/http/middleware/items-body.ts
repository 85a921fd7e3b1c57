// The body reader of a route with `bodyItems` (route.ts): the bytes are read once, within the
// process's budget for large bodies (body-budget.ts), and split into items that the handler
// parses one at a time (json-items.ts). A body of any other shape or type gets the ordinary JSON
// parser's answer.
import type { Middleware } from 'koa';
import { AppError } from '../../app-error.ts';
import { largeBodies } from '../body-budget.ts';
import { BodyBuffers } from '../body-buffers.ts';
import { parseWhole, splitJsonItems } from '../json-items.ts';
import { readBody } from './json-body.ts';

/** How long a body waits for the budget before the client is told to retry. */
const budgetWaitMs = 10_000;

/** Buffers for declared lengths, reused: at most one budget's worth kept spare. */
const bodyBuffers = new BodyBuffers(largeBodies.capacity);

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
      const bytes = await readBody(ctx.req, limit, lease);
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
