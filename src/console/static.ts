// The console's stylesheet (static/console.css), read once at start and served under a name with
// its content hash, so a browser keeps it for a year without asking again (immutable, RFC 8246)
// and a changed file is a new address. Its ETag answers a revalidation with 304 (RFC 9110 §13.1.2).
// Pages load it with their CSP nonce: the policy stays `style-src 'nonce-…'`, nothing else allowed
// (pages/stylesheet.ts serves it).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

const css = readFileSync(new URL('./static/console.css', import.meta.url));
const hash = createHash('sha256').update(css).digest('hex').slice(0, 16);
/** The stylesheet's file name and its validator. */
export const stylesheet = { css, file: `console.${hash}.css`, etag: `"${hash}"` };

/** Where pages link the stylesheet. */
export const stylesheetPath = `/console/static/${stylesheet.file}`;
