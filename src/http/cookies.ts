// The Account Portal's cookies. The portal keeps its own end-user session (a normal session
// bearer) in an HttpOnly cookie; SameSite=Lax keeps it off cross-site POSTs, and every form also
// carries a CSRF token (csrf.ts). Secure whenever the service runs on https.
import type { Context } from 'koa';
import type { Config } from '../config.ts';

type CookieOptions = NonNullable<Parameters<Context['cookies']['set']>[2]>;

export const sessionCookie = 'cairn_portal_session';
export const browserCookie = 'cairn_portal_browser';

function options(config: Config, maxAgeSeconds: number) {
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: config.CAIRN_BASE_URL.startsWith('https://'),
    path: '/',
    maxAge: maxAgeSeconds * 1000,
    overwrite: true,
  };
}

/**
 * Every cookie goes out here. A Secure cookie follows the base URL, not the socket: the web never
 * terminates TLS itself, so its socket is plain even when the client used https, and Koa's cookie
 * jar would throw on a Secure cookie over it (a 500) whenever no trusted proxy said https. Requests
 * a trusted proxy says came over http never get this far (middleware/https-only.ts).
 */
function put(ctx: Context, name: string, value: string, o: CookieOptions): void {
  if (o.secure) ctx.cookies.secure = true;
  ctx.cookies.set(name, value, o);
}

export function setPortalSession(ctx: Context, config: Config, token: string): void {
  put(ctx, sessionCookie, token, options(config, 30 * 86400));
}

export function clearPortalSession(ctx: Context, config: Config): void {
  put(ctx, sessionCookie, '', { ...options(config, 0), maxAge: 0 });
}

export function setBrowserId(ctx: Context, config: Config, id: string): void {
  put(ctx, browserCookie, id, options(config, 365 * 86400));
}

/**
 * The console's session (docs/api.md "Console"): only for /console, as long as the session lasts on
 * the server. SameSite=Lax, as GitHub's and Sentry's sessions: a link to a console page from chat,
 * mail or a sign-in link opens it signed in (Strict drops the cookie on any navigation a
 * cross-site click started, redirects included), while other sites' POSTs still go without it,
 * and every form carries its CSRF token besides (http/csrf.ts).
 */
export const consoleCookie = 'cairn_console_session';

export function setConsoleSession(ctx: Context, config: Config, token: string, maxAgeSeconds: number): void {
  put(ctx, consoleCookie, token, { ...options(config, maxAgeSeconds), sameSite: 'lax', path: '/console' });
}

export function clearConsoleSession(ctx: Context, config: Config): void {
  put(ctx, consoleCookie, '', { ...options(config, 0), sameSite: 'lax', path: '/console', maxAge: 0 });
}
