// An https deployment (CAIRN_BASE_URL https://…) answers only over https. The web process never
// terminates TLS itself: a proxy in front does and says which scheme the client used in
// X-Forwarded-Proto (Heroku's router sets it on every request), which is read only when that proxy
// is trusted (CAIRN_TRUSTED_PROXY_HOPS ≥ 1, as X-Forwarded-For). A request it says came over plain
// http is sent to https: GET and HEAD by a permanent redirect to the same path and query on the
// base URL's origin (RFC 6797 §7.2), anything else refused with 403 forbidden, reason
// `https_required` (its body, a password or a key perhaps, has already crossed the network in
// clear; a redirect would only have the client send it again). /healthz and /readyz stay
// answerable over http for load balancers' health checks; they carry no cookie and no secret.
//
// When the scheme is not said (no trusted proxy, or a proxy that does not send the header), the
// request is taken as https: the base URL is the operator's word that something in front
// terminates TLS, and a redirect there could never end. Answers taken as https carry
// Strict-Transport-Security for a year, without includeSubDomains: the names under the base URL's
// host are not Cairn's to bind to https (it may well be an organisation's apex), and the header
// cannot be taken back before it expires. Browsers ignore it on an answer that came over http
// (RFC 6797 §8.1), so sending it when unsure costs nothing.
import type { Context, Middleware } from 'koa';
import type { Config } from '../../config.ts';
import { AppError } from '../../app-error.ts';
import type { Logger } from '../../log.ts';

export const hstsHeader = 'max-age=31536000';
const healthChecks = new Set(['/healthz', '/readyz']);

/** Whether a trusted proxy said the client came over plain http. */
function saidPlainHttp(ctx: Context, hops: number): boolean {
  if (hops === 0) return false;
  const said = ctx.get('x-forwarded-proto').split(',', 1)[0]!.trim().toLowerCase();
  return said === 'http';
}

export function httpsOnly(config: Config, log: Logger): Middleware {
  const base = new URL(config.CAIRN_BASE_URL);
  if (base.protocol !== 'https:') return (_ctx, next) => next();
  const hops = config.CAIRN_TRUSTED_PROXY_HOPS;
  if (hops === 0)
    log.warn(
      'CAIRN_BASE_URL is https but no proxy is trusted (CAIRN_TRUSTED_PROXY_HOPS=0): every request is taken as https ' +
        'and every client as the address it connects from. If a proxy terminates TLS in front of web, set ' +
        'CAIRN_TRUSTED_PROXY_HOPS to the number of proxies.',
    );
  return async (ctx, next) => {
    if (!saidPlainHttp(ctx, hops)) {
      ctx.set('Strict-Transport-Security', hstsHeader);
      return next();
    }
    if (healthChecks.has(ctx.path)) return next();
    const target = new URL(base.origin);
    target.pathname = ctx.path;
    target.search = ctx.querystring;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD')
      throw new AppError('forbidden', `this service answers only over https: send the request to ${target.href}`, {
        details: { reason: 'https_required' },
      });
    ctx.redirect(target.href);
    ctx.status = 308;
  };
}
