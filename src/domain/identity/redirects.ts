// The one decision on where the service may send a browser it was told to send somewhere. A
// redirect target is where a one-use token travels next (a reset token, a ticket, a session in the
// fragment), so an open redirect hands the account to whoever names the target (OWASP Unvalidated
// Redirects and Forwards Cheat Sheet; RFC 9700 §4.11). Every place that accepts a target calls
// `allowedRedirect` (sign-up verification, password reset, social sign-in, the Account Portal) or,
// where a path on this service is expected, `localPath` (sign-out's `next`).
//
// Allowed: the portal's own pages on CAIRN_BASE_URL; a URL on one of the environment's
// `redirect_origins`, or equal to one of its `redirect_urls`; in a test environment also
// http://localhost and http://127.0.0.1 on any port (development). Nothing else, in either mode.
// The raw text must be plain: no whitespace, control characters or backslashes, which browsers
// and URL parsers read differently (WHATWG URL turns `\` into `/` in http(s) URLs and strips tabs
// and newlines), and no user name or password (`https://app.example@attacker.example`).
import type { Config } from '../../config.ts';
import { AppError } from '../../app-error.ts';
import type { EnvMode } from '../tenancy/keys.ts';

/** The environment's own lists of allowed targets (settings.ts keeps them under `identity`). */
export interface RedirectLists {
  redirect_origins: string[];
  redirect_urls: string[];
}

export interface RedirectPolicy {
  envName: string;
  mode: EnvMode;
  settings: RedirectLists;
}

/** Account Portal pages a target may name without being on the environment's lists. */
export const portalPages = ['/sign-in', '/sign-up', '/device', '/consent', '/signed-in', '/verify-email'];

/** Hosts a test environment accepts over http on any port. */
const developmentHosts = new Set(['localhost', '127.0.0.1']);

/** C0 and C1 controls, DEL, any whitespace, zero-width marks and backslashes, anywhere in the text. */
function hasUnsafeCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return /[\s\\\u200b-\u200f]/.test(text);
}

/** The parsed http(s) URL, or null when the text is not one we would send a browser to. */
function parseTarget(url: string): URL | null {
  if (hasUnsafeCharacter(url) || !/^https?:\/\/[^/]/i.test(url)) return null;
  const parsed = URL.parse(url);
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || parsed.username || parsed.password)
    return null;
  return parsed;
}

/** For `redirect_urls` entries: an http(s) URL a browser could be sent to as written. */
export function isPlainTarget(url: string): boolean {
  return parseTarget(url) !== null;
}

export function isPortalPage(config: Pick<Config, 'CAIRN_BASE_URL'>, url: string): boolean {
  const parsed = parseTarget(url);
  if (!parsed) return false;
  const base = new URL(config.CAIRN_BASE_URL);
  const prefix = base.pathname.replace(/\/$/, '');
  return parsed.origin === base.origin && portalPages.some((p) => parsed.pathname === `${prefix}${p}`);
}

function allowedBy(config: Pick<Config, 'CAIRN_BASE_URL'>, env: RedirectPolicy, parsed: URL, raw: string): boolean {
  if (isPortalPage(config, raw)) return true;
  if (env.settings.redirect_origins.includes(parsed.origin)) return true;
  if (env.settings.redirect_urls.some((u) => u === raw || URL.parse(u)?.href === parsed.href)) return true;
  return env.mode === 'test' && parsed.protocol === 'http:' && developmentHosts.has(parsed.hostname);
}

function refusal(env: RedirectPolicy, field: string, parsed: URL | null): AppError {
  const origin = parsed?.origin ?? 'https://app.example.com';
  const how = `add the origin to the environment's identity settings redirect_origins: PUT /v1/${env.envName}/identity_settings with {"redirect_origins": ["${origin}"]} and the rest of the settings (PUT replaces them all; GET shows them)`;
  const modeRule =
    env.mode === 'test'
      ? "a test environment accepts its redirect_origins, http://localhost and http://127.0.0.1 on any port, and the portal's own pages"
      : "a live environment accepts only its redirect_origins and the portal's own pages";
  const message = parsed
    ? `${field} on ${parsed.origin} is not allowed (${modeRule}); to allow it, ${how}`
    : `${field} must be an absolute http(s) URL without spaces, control characters, backslashes, user name or password (${modeRule}); to allow an app, ${how}`;
  return new AppError('invalid_request', message, {
    details: { reason: 'redirect_url_not_allowed', setting: 'redirect_origins' },
  });
}

/** The target, normalised, when the environment allows it; else `400 invalid_request` naming the setting. */
export function allowedRedirect(
  config: Pick<Config, 'CAIRN_BASE_URL'>,
  env: RedirectPolicy,
  url: string,
  field = 'redirect_url',
): string {
  const parsed = parseTarget(url);
  if (!parsed || !allowedBy(config, env, parsed, url)) throw refusal(env, field, parsed);
  return parsed.href;
}

/**
 * For targets stored earlier (a sign-up waiting for its worker, a link already mailed): still
 * allowed under today's settings, or null so the caller falls back to the portal's own page.
 */
export function stillAllowed(
  config: Pick<Config, 'CAIRN_BASE_URL'>,
  env: RedirectPolicy,
  url: string | null | undefined,
): string | null {
  if (!url) return null;
  const parsed = parseTarget(url);
  return parsed && allowedBy(config, env, parsed, url) ? parsed.href : null;
}

/**
 * A path on this service (`/device?user_code=…`), never another host: it must start with one `/`
 * followed by something other than `/` or `\` (`//host` and `/\host` are network-path references
 * to another host, RFC 3986 §4.2, and browsers read `\` as `/`), and hold no scheme, whitespace,
 * control characters or backslashes.
 */
export function localPath(config: Pick<Config, 'CAIRN_BASE_URL'>, path: string, field = 'next'): string {
  const base = new URL(config.CAIRN_BASE_URL);
  const ok =
    /^\/(?![/\\])/.test(path) &&
    !hasUnsafeCharacter(path) &&
    URL.parse(path, config.CAIRN_BASE_URL)?.origin === base.origin;
  if (!ok)
    throw new AppError(
      'invalid_request',
      `${field} must be a path on this service, such as /device (not //host, /\\host, a scheme or a full URL)`,
      { details: { reason: 'redirect_url_not_allowed' } },
    );
  return path;
}

/**
 * What an entry of `redirect_origins` must look like: exactly an origin as browsers serialise it
 * (RFC 6454 §6.2: scheme, host, port only when not the default), so that comparing strings is
 * comparing origins. Answers the problem, or undefined when the entry is fine.
 */
export function originEntryProblem(entry: string): string | undefined {
  const parsed = hasUnsafeCharacter(entry) ? null : URL.parse(entry);
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || !/^https?:\/\//i.test(entry)) {
    return 'must be an origin: http:// or https:// and a host, e.g. https://app.example.com';
  }
  if (parsed.hostname.includes('*')) return 'wildcards are not supported: list each origin';
  if (entry === parsed.origin) return undefined;
  if (parsed.username || parsed.password) return 'must not hold a user name or password';
  if (parsed.pathname !== '/' || parsed.search || parsed.hash || entry.endsWith('/'))
    return `must be scheme and host only (no path, query or fragment): "${parsed.origin}"`;
  return `must be written as browsers write the origin: "${parsed.origin}"`;
}
