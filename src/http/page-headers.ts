// The security headers of every server-rendered page (the Account Portal and the console): a CSP
// that allows only the page's own nonce-tagged styles and scripts, forms posting to this origin
// (and the given targets), no framing (CSP frame-ancestors and X-Frame-Options for older browsers),
// and no Referer that could carry a page's query onwards.
import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';

/** Sets the headers; answers the nonce for the page's `<style>` (and `<script>`) tags. */
export function pageHeaders(ctx: Context, o: { formTargets?: string[]; scripts?: boolean } = {}): string {
  const nonce = randomBytes(16).toString('base64');
  const targets = [...new Set(o.formTargets ?? [])].map((t) => ` ${t}`).join('');
  const scripts = o.scripts ? `; script-src 'nonce-${nonce}'; connect-src 'self'` : '';
  ctx.set(
    'Content-Security-Policy',
    `default-src 'none'; style-src 'nonce-${nonce}'; img-src https: data:; form-action 'self'${targets}; frame-ancestors 'none'; base-uri 'none'${scripts}`,
  );
  ctx.set('X-Frame-Options', 'DENY');
  ctx.set('Referrer-Policy', 'no-referrer');
  return nonce;
}
