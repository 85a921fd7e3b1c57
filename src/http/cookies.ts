// The Account Portal's cookies. The portal keeps its own end-user session (a normal session
// bearer) in an HttpOnly cookie; SameSite=Lax keeps it off cross-site POSTs, and every form also
// carries a CSRF token (csrf.ts). Secure whenever the service runs on https.
import type { Context } from 'koa';
import type { Config } from '../config.ts';

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

export function setPortalSession(ctx: Context, config: Config, token: string): void {
  ctx.cookies.set(sessionCookie, token, options(config, 30 * 86400));
}

export function clearPortalSession(ctx: Context, config: Config): void {
  ctx.cookies.set(sessionCookie, '', { ...options(config, 0), maxAge: 0 });
}

export function setBrowserId(ctx: Context, config: Config, id: string): void {
  ctx.cookies.set(browserCookie, id, options(config, 365 * 86400));
}

/**
 * The console's session (CONTRACT.md "Console"): only for /console, as long as the session lasts on
 * the server. SameSite=Lax, as GitHub's and Sentry's sessions: a link to a console page from chat,
 * mail or a sign-in link opens it signed in (Strict drops the cookie on any navigation a
 * cross-site click started, redirects included), while other sites' POSTs still go without it,
 * and every form carries its CSRF token besides (http/csrf.ts).
 */
export const consoleCookie = 'cairn_console_session';

export function setConsoleSession(ctx: Context, config: Config, token: string, maxAgeSeconds: number): void {
  ctx.cookies.set(consoleCookie, token, { ...options(config, maxAgeSeconds), sameSite: 'lax', path: '/console' });
}

export function clearConsoleSession(ctx: Context, config: Config): void {
  ctx.cookies.set(consoleCookie, '', { ...options(config, 0), sameSite: 'lax', path: '/console', maxAge: 0 });
}
