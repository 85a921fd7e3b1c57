// Request id (Heroku's router sends X-Request-ID; we keep a sane one, else make one), a child
// logger that carries it on every line, and one completion line per request. Paths are logged
// without their query string, which can hold tickets and tokens.
import type { Middleware } from 'koa';
import { newUlid } from '../../ids.ts';
import type { Logger } from '../../log.ts';
import type { RequestState } from '../context.ts';

const validId = /^[\w.:-]{8,200}$/;

export function requestContext(log: Logger): Middleware {
  return async (ctx, next) => {
    const incoming = ctx.get('x-request-id');
    const requestId = validId.test(incoming) ? incoming : `req_${newUlid()}`;
    const state = ctx.state as RequestState;
    state.requestId = requestId;
    state.log = log.child({ request_id: requestId });
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      state.log.info(
        { method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started) },
        'request',
      );
    }
  };
}
