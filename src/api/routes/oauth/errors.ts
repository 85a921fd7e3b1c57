// Errors of the OAuth endpoints in RFC 6749 §5.2's form (`{error, error_description}`, RFC 8628
// §3.5 for the device grant), so standard OAuth clients (openid-client's device flow) read them.
// What the rest of the service would answer as an AppError is translated: a bad request stays
// invalid_request, a lost database is temporarily_unavailable with Retry-After, the rest is
// server_error with only the request id. The app hands it to the route kernel (KernelHooks).
import type { Middleware } from 'koa';
import { OAuthError } from '../../../domain/oauth/errors.ts';
import type { RequestState } from '../../../http/context.ts';
import { toAppError } from '../../../http/middleware/errors.ts';

function toOAuthError(err: unknown): OAuthError {
  if (err instanceof OAuthError) return err;
  const e = toAppError(err);
  if (e.code === 'store_unavailable')
    return new OAuthError('temporarily_unavailable', 'the database is unavailable; retry shortly', {
      status: 503,
      retryAfter: e.retryAfter ?? 5,
    });
  if (e.status >= 500) return new OAuthError('server_error', 'internal error', { status: 500 });
  // 413 stays 413; every other refusal of the request is RFC 6749's 400.
  return new OAuthError('invalid_request', e.message, { status: e.status === 413 ? 413 : 400 });
}

export function oauthErrors(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const state = ctx.state as RequestState;
      const e = toOAuthError(err);
      if (e.error === 'server_error') state.log.error({ err }, 'oauth endpoint failed');
      ctx.status = e.status;
      if (e.retryAfter !== undefined) ctx.set('Retry-After', String(e.retryAfter));
      // RFC 6750 §3 for 401: say how to authenticate.
      if (e.status === 401) ctx.set('WWW-Authenticate', 'Basic realm="cairn"');
      ctx.body = {
        error: e.error,
        error_description: e.error === 'server_error' ? `internal error; quote request ${state.requestId}` : e.message,
      };
    }
  };
}
