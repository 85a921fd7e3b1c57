// File names as frames print them, made comparable: for source map matching (docs/api.md: the
// same path once scheme, host, query and fragment are dropped) and for grouping (no
// hashed bundle names, no vendor code in the key).

/**
 * `https://cdn.example.com/static/app.js?v=3#x` → `/static/app.js`; `C:\app\x.js` → `C:/app/x.js`;
 * `~/static/app.js` (sentry-cli's "any host") → `/static/app.js`.
 */
export function filePath(file: string): string {
  let f = file.replace(/[?#].*$/, '').replace(/\\/g, '/');
  const url = /^[a-z][a-z0-9+.-]*:\/\/([^/]*)(.*)$/i.exec(f);
  if (url) f = url[2] || '/';
  else if (f.startsWith('~/')) f = f.slice(1);
  return f;
}

// Content hashes in bundle names: `main.8f3a2c.js`, `123.abcdef12.chunk.js` (hex, at least one
// digit), esbuild's `chunk-ABCD1234.js` and Vite's `index-BkzX9a1c.js` (8 characters with a digit
// and a capital). `my-component2.js` keeps its name.
const hexHash = /[.-](?=[0-9a-f]*\d)[0-9a-f]{6,32}(?=\.(?:chunk\.)?m?[jt]sx?$)/;
const base32Hash = /-(?=[A-Za-z0-9_]*\d)(?=[A-Za-z0-9_]*[A-Z])[A-Za-z0-9_]{8}(?=\.m?jsx?$)/;

/** The grouping form of a file: no origin or query, no bundler prefix or content hash. */
export function normalizeFile(file: string): string {
  let f = filePath(file)
    .replace(/^webpack:\/*(?:[^/]*\/)?/, '')
    .replace(/^\/?(?:\.\.?\/)+/, '')
    .replace(/^file:\/*/, '/');
  const slash = f.lastIndexOf('/');
  const dir = f.slice(0, slash + 1);
  const base = f
    .slice(slash + 1)
    .replace(hexHash, '')
    .replace(base32Hash, '');
  f = dir + base;
  return f;
}

const vendor = /(?:^|\/)(?:node_modules|bower_components|vendor|jspm_packages)\//;
const notCode = /^(?:node:|internal\/|native$|<anonymous>$|<native>$|\[native code\]$|eval$)/;

/** Application code, as opposed to dependencies, the runtime, or code with no file. */
export function isInApp(file: string | undefined): boolean {
  if (!file) return false;
  const path = filePath(file).replace(/^webpack:\/*/, '');
  if (notCode.test(file) || notCode.test(path)) return false;
  return !vendor.test(path);
}
