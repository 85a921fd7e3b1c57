// The OAuth endpoints of the device authorization grant (RFC 8628): form-encoded requests
// (RFC 6749 §3.2, §4.1.3) and errors in the RFC's own form, so standard OAuth clients (e.g.
// openid-client's initiateDeviceAuthorization / pollDeviceAuthorizationGrant) work unchanged.
// That is why they are plain koa routes, not defineRoute ones: the /v1 error body does not apply.
import Router from '@koa/router';
import { bodyParser } from '@koa/bodyparser';
import type { Context, Middleware } from 'koa';
import { findUnstorable } from '../../../http/unstorable.ts';
import { isDeviceGrant, pollDeviceToken, startDeviceAuthorization } from '../../../domain/oauth/device.ts';
import { OAuthError } from '../../../domain/oauth/errors.ts';
import { isStoreUnavailable } from '../../../errors.ts';
import type { AppDeps, RequestState } from '../../../http/context.ts';
import { clientFrom } from '../identity/client.ts';

type Form = Record<string, string | undefined>;

/** Form fields as single strings; a repeated parameter is an error (RFC 6749 §3.1). */
function formOf(ctx: Context): Form {
  if (!ctx.is('application/x-www-form-urlencoded'))
    throw new OAuthError('invalid_request', 'send the parameters as application/x-www-form-urlencoded');
  const body = (ctx.request as { body?: unknown }).body;
  const out: Form = {};
  for (const [k, v] of Object.entries(typeof body === 'object' && body !== null ? body : {})) {
    if (typeof v !== 'string') throw new OAuthError('invalid_request', `parameter ${k} must appear once`);
    if (v.length > 2048) throw new OAuthError('invalid_request', `parameter ${k} is too long`);
    if (findUnstorable(v, k))
      throw new OAuthError(
        'invalid_request',
        `parameter ${k} holds a character that cannot be stored (U+0000 or an unpaired surrogate)`,
      );
    out[k] = v;
  }
  return out;
}

/** RFC 6749 §2.3.1: a public client may also send its id in HTTP Basic with an empty secret. */
function clientIdOf(ctx: Context, form: Form): string | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(ctx.get('authorization'));
  const fromBasic = m ? decodeURIComponent(Buffer.from(m[1]!, 'base64').toString().split(':')[0] ?? '') : undefined;
  if (fromBasic && form.client_id && fromBasic !== form.client_id)
    throw new OAuthError('invalid_request', 'two different client ids');
  return fromBasic || form.client_id;
}

function oauthErrors(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const state = ctx.state as RequestState;
      let e: OAuthError;
      if (err instanceof OAuthError) e = err;
      else if (isStoreUnavailable(err))
        e = new OAuthError('temporarily_unavailable', 'the database is unavailable; retry shortly', {
          status: 503,
          retryAfter: 5,
        });
      else if ((err as { status?: number }).status === 413)
        e = new OAuthError('invalid_request', 'the request body is too large', { status: 413 });
      else if (
        (err as { status?: number }).status === 400 ||
        (err as { status?: number }).status === 415 ||
        String((err as { code?: string }).code).startsWith('Z_')
      ) {
        e = new OAuthError('invalid_request', 'the request body could not be read');
      } else if (
        err instanceof URIError ||
        (err as { code?: string }).code === '22021' ||
        (err as { code?: string }).code === '22P05'
      ) {
        e = new OAuthError('invalid_request', 'a parameter is not valid text');
      } else {
        state.log.error({ err }, 'oauth endpoint failed');
        e = new OAuthError('server_error', `internal error; quote request ${state.requestId}`, { status: 500 });
      }
      ctx.status = e.status;
      if (e.retryAfter !== undefined) ctx.set('Retry-After', String(e.retryAfter));
      // RFC 6750 §3 for 401: say how to authenticate.
      if (e.status === 401) ctx.set('WWW-Authenticate', 'Basic realm="cairn"');
      ctx.body = { error: e.error, error_description: e.message };
    }
  };
}

export function oauthRouter(deps: AppDeps): Router {
  const router = new Router({ prefix: '/v1/oauth' });
  const form = bodyParser({ enableTypes: ['form'], formLimit: '100kb', encoding: 'utf-8' }) as Middleware;

  router.post('/device_authorization', oauthErrors(), form, async (ctx) => {
    const f = formOf(ctx);
    ctx.body = await startDeviceAuthorization(deps.db, deps.config, { clientId: clientIdOf(ctx, f), scope: f.scope });
  });

  router.post('/token', oauthErrors(), form, async (ctx) => {
    const f = formOf(ctx);
    if (!f.grant_type) throw new OAuthError('invalid_request', 'grant_type is required');
    if (!isDeviceGrant(f.grant_type))
      throw new OAuthError('unsupported_grant_type', 'only urn:ietf:params:oauth:grant-type:device_code is served');
    ctx.body = await pollDeviceToken(deps.db, {
      clientId: clientIdOf(ctx, f),
      deviceCode: f.device_code,
      from: clientFrom(ctx),
    });
  });
  return router;
}
