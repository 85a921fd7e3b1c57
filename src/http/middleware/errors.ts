// The one error middleware (docs/conventions.md "Errors"): AppError codes → statuses (docs/api.md), body-parser
// failures → invalid_request, a lost database → store_unavailable with Retry-After, constraint
// names → codes, and anything else → internal with only the request id. Detail goes to the log.
import type { Middleware } from 'koa';
import { AppError, isStoreUnavailable } from '../../app-error.ts';
import type { RequestState } from '../context.ts';

export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  const e = err as { status?: number; type?: string; code?: string; constraint?: string; expose?: boolean };
  if (e?.status === 413 || e?.type === 'entity.too.large') {
    return new AppError('invalid_request', 'the request body is too large', { status: 413 });
  }
  if (e?.status === 400 || e?.type === 'entity.parse.failed' || err instanceof SyntaxError) {
    return new AppError('invalid_request', 'the request body is not valid JSON');
  }
  // A body whose Content-Encoding does not decode (a "gzip" body that is not gzip): zlib's codes.
  if (typeof e?.code === 'string' && e.code.startsWith('Z_')) {
    return new AppError('invalid_request', 'the request body does not decode as its Content-Encoding says');
  }
  if (e?.status === 415 && /encoding/i.test(String((err as Error).message))) {
    return new AppError(
      'invalid_request',
      'unsupported Content-Encoding: send the body as identity, gzip, deflate or br',
      { status: 415 },
    );
  }
  if (e?.status === 415) return new AppError('invalid_request', 'send the body as application/json');
  // A path that does not percent-decode (%FF).
  if (err instanceof URIError)
    return new AppError('invalid_request', 'the request path is not valid percent-encoded UTF-8');
  // The last line for a character Postgres cannot store (unstorable.ts refuses them at the edge).
  if (e?.code === '22021' || e?.code === '22P05')
    return new AppError(
      'invalid_request',
      'a value holds a character that cannot be stored (U+0000 or an unpaired surrogate)',
      { cause: err },
    );
  if (isStoreUnavailable(err)) {
    return new AppError('store_unavailable', 'the database is unavailable; retry shortly', {
      retryAfter: 5,
      cause: err,
    });
  }
  if (e?.code === '23505')
    return new AppError('conflict', `already exists (${e.constraint ?? 'unique'})`, { cause: err });

  return new AppError('internal', 'internal error; quote the request id when you report it', { cause: err });
}

export function errorHandler(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError('not_found', `no route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const state = ctx.state as RequestState;
      const appError = toAppError(err);
      const level = appError.status >= 500 ? 'error' : 'info';
      state.log?.[level](
        {
          err: appError.code === 'internal' || appError.code === 'store_unavailable' ? err : undefined,
          code: appError.code,
        },
        appError.message,
      );
      ctx.status = appError.status;
      if (appError.retryAfter !== undefined) ctx.set('Retry-After', String(appError.retryAfter));
      ctx.body = {
        code: appError.code,
        message: appError.message,
        request_id: state.requestId,
        ...(appError.details ? { details: appError.details } : {}),
      };
    }
  };
}
