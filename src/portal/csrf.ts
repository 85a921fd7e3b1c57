// CSRF protection for the portal's forms: each browser gets a random id in an HttpOnly cookie,
// and every form carries an HMAC of it (the "signed double-submit cookie" of OWASP's CSRF
// Prevention Cheat Sheet). A POST also must not come from another origin when the browser says
// where it came from (Origin). The same browser id keys the wrong user-code limit.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { sha256 } from '../crypto.ts';
import { AppError } from '../errors.ts';
import { browserCookie, setBrowserId } from './cookies.ts';

function key(config: Config): Buffer {
  return sha256(Buffer.concat([Buffer.from('cairn-portal-csrf:'), config.encryptionKeys.get(config.CAIRN_ENCRYPTION_KEY_ID)!]));
}

/** The browser's id, made (and set as a cookie) on its first visit. */
export function browserId(ctx: Context, config: Config): string {
  const existing = ctx.cookies.get(browserCookie);
  if (existing && /^[A-Za-z0-9_-]{22,64}$/.test(existing)) return existing;
  const id = randomBytes(18).toString('base64url');
  setBrowserId(ctx, config, id);
  // Visible to the rest of this request, so the token rendered now matches the cookie just set.
  ctx.state.browserId = id;
  return id;
}

export function csrfToken(ctx: Context, config: Config): string {
  const id = (ctx.state.browserId as string | undefined) ?? browserId(ctx, config);
  return createHmac('sha256', key(config)).update(id).digest('base64url');
}

export function checkCsrf(ctx: Context, config: Config, sent: string | undefined): void {
  const refused = new AppError('forbidden', 'this form has expired; reload the page and try again', { details: { reason: 'csrf' } });
  const origin = ctx.get('origin');
  if (origin && origin !== 'null' && origin !== new URL(config.CAIRN_BASE_URL).origin) throw refused;
  const id = ctx.cookies.get(browserCookie);
  if (!id || !sent) throw refused;
  const expected = Buffer.from(createHmac('sha256', key(config)).update(id).digest('base64url'));
  const got = Buffer.from(sent);
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) throw refused;
}
