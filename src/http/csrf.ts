// CSRF protection for the portal's forms: each browser gets a random id in an HttpOnly cookie,
// and every form carries an HMAC of it (the "signed double-submit cookie" of OWASP's CSRF
// Prevention Cheat Sheet). The id is issued on the page's GET, before any session: a sign-in form
// is protected as much as any other, which is OWASP's advice against login CSRF. A POST also must
// not come from another origin when the browser says where it came from: Origin, and Fetch
// Metadata's Sec-Fetch-Site (W3C), which browsers send even where Origin is `null` (our own pages
// send `Origin: null`, being Referrer-Policy: no-referrer, so a page of another site that does
// the same is told apart only by Sec-Fetch-Site). The same browser id keys the wrong user-code
// limit, so the cookie carries the id with our signature: an id the client made up is never taken.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import type { Config } from '../config.ts';
import { sha256 } from '../crypto.ts';
import { AppError } from '../app-error.ts';
import { browserCookie, setBrowserId } from './cookies.ts';

function key(config: Config): Buffer {
  return sha256(
    Buffer.concat([Buffer.from('cairn-portal-csrf:'), config.encryptionKeys.get(config.CAIRN_ENCRYPTION_KEY_ID)!]),
  );
}

const sign = (config: Config, id: string): string =>
  createHmac('sha256', key(config)).update(`browser:${id}`).digest('base64url').slice(0, 22);

/**
 * The browser's id from its cookie, `<id>.<signature>`: only an id this service issued counts. A
 * cookie the client wrote itself (to reset the wrong-code budget keyed on it) gets a new id.
 */
function issuedId(ctx: Context, config: Config): string | undefined {
  const m = /^([A-Za-z0-9_-]{24})\.([A-Za-z0-9_-]{22})$/.exec(ctx.cookies.get(browserCookie) ?? '');
  if (!m) return undefined;
  const expected = Buffer.from(sign(config, m[1]!));
  return timingSafeEqual(Buffer.from(m[2]!), expected) ? m[1] : undefined;
}

/** The browser's id, issued (and set as a signed cookie) on its first visit. */
export function browserId(ctx: Context, config: Config): string {
  const existing = (ctx.state.browserId as string | undefined) ?? issuedId(ctx, config);
  if (existing) return existing;
  const id = randomBytes(18).toString('base64url');
  setBrowserId(ctx, config, `${id}.${sign(config, id)}`);
  // Visible to the rest of this request, so the token rendered now matches the cookie just set.
  ctx.state.browserId = id;
  return id;
}

/** The page's token, made once per request (a console page has a form per row, each carrying it). */
export function csrfToken(ctx: Context, config: Config): string {
  const made = ctx.state.csrfToken as string | undefined;
  if (made) return made;
  const id = (ctx.state.browserId as string | undefined) ?? browserId(ctx, config);
  return (ctx.state.csrfToken = createHmac('sha256', key(config)).update(id).digest('base64url'));
}

export function checkCsrf(ctx: Context, config: Config, sent: string | undefined): void {
  const refused = new AppError('forbidden', 'this form has expired; reload the page and try again', {
    details: { reason: 'csrf' },
  });
  const origin = ctx.get('origin');
  if (origin && origin !== 'null' && origin !== new URL(config.CAIRN_BASE_URL).origin) throw refused;
  // `same-site` too: a sibling subdomain is another party (and could have set our cookie for us).
  const site = ctx.get('sec-fetch-site');
  if (site === 'cross-site' || site === 'same-site') throw refused;
  const id = issuedId(ctx, config);
  if (!id || !sent) throw refused;
  const expected = Buffer.from(createHmac('sha256', key(config)).update(id).digest('base64url'));
  const got = Buffer.from(sent);
  if (got.length !== expected.length || !timingSafeEqual(got, expected)) throw refused;
}
