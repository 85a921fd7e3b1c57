// SpiderMonkey's (Firefox) and JavaScriptCore's (Safari, React Native's JavaScriptCore) frame
// lines: `name@location`, and the location alone. Read as frame-line.ts reads V8's, by string
// searches from the ends rather than regular expressions over the line (CWE-1333).
import { closingParen, endsWithPosition, parseLocation, positive, type Location } from './location.ts';
import { frame, maxTries, type ParsedFrame } from './parsed-frame.ts';

export const schemeStart = (text: string): boolean => {
  // RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"
  const first = text.charCodeAt(0);
  if (!((first >= 65 && first <= 90) || (first >= 97 && first <= 122))) return false;
  for (let i = 1; i < text.length && i < 40; i++) {
    const c = text.charCodeAt(i);
    if (c === 58) return i > 1 || text.charCodeAt(2) === 92 || text.charCodeAt(2) === 47; // `C:\` is a drive, and a location too
    const ok =
      (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
    if (!ok) return false;
  }
  return false;
};

/** Whether text after an `@` begins as a location does: a URL, a path, `[native code]`, `1:234`. */
function locationStart(text: string): boolean {
  if (text === '') return false;
  const c = text.charCodeAt(0);
  if (c === 47 || c === 92 || c === 46 || c === 91 || c === 60) return true; // / \ . [ <
  // `1:234` or `12` alone, never a file: checked without copying the rest of the line, which can be
  // 64 KiB long and hold an `@` at every third character.
  if (c >= 48 && c <= 57) return text.length <= 33 && /^\d{1,16}(?::\d{1,16})?$/.test(text);
  return schemeStart(text);
}

/** SpiderMonkey's `url line 12 > eval:1:3` (and `> Function`, nested): the eval call site in `url`. */
function geckoEval(text: string): Location | undefined {
  let from = 0;
  for (let tries = 0; tries < maxTries; tries++) {
    const at = text.indexOf(' line ', from);
    if (at < 0) return undefined;
    let i = at + 6;
    while (i < text.length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    if (at > 0 && i > at + 6 && text.startsWith(' > ', i)) {
      const out: Location = { file: text.slice(0, at) };
      const line = positive(text, at + 6, i);
      if (line !== undefined) out.line = line;
      return out;
    }
    from = at + 6;
  }
  return undefined;
}

/** A location after `@`: `url:1:2`, `url:1`, `[native code]`, `1:234`, Gecko's eval chain. */
function atLocation(text: string): { loc: Location; evalOrigin?: string } | undefined {
  if (text === '[native code]') return { loc: { file: text } };
  // JavaScriptCore's wasm frames: `<?>:wasm-function[1]`, no source location.
  if (text.startsWith('<?>:wasm-function[')) return { loc: {} };
  const evalSite = geckoEval(text);
  if (evalSite) return { loc: evalSite, evalOrigin: text };
  if (!endsWithPosition(text) && !/^\d+(?::\d+)?$/.test(text.slice(0, 32))) return undefined;
  return { loc: parseLocation(text) };
}

/**
 * SpiderMonkey prints a frame as `asyncCause*displayName@source:line:column` (js/src/vm/SavedStacks.cpp).
 * The async cause (`setTimeout handler*`, `async*`, `promise callback*`) says how the frame was
 * reached, not what ran, and is left out. The display name is kept as printed, closure path and all:
 * the name resolver (js/src/frontend/NameFunctions.cpp) names an anonymous function by where it
 * stands, `test/<` for one inside `test`, so `test/<` ran in that anonymous function and `test`
 * would claim it ran in `test` itself. Sentry's parser keeps it so too (sentry-javascript
 * packages/browser/src/stack-parsers.ts, its Firefox 31, 44 and 66 tests). Firefox before 14
 * printed the arguments (`bar(2)@…`, `()@…`, `(null)@…`): not part of the name, dropped as Sentry does.
 */
function geckoName(name: string): string | undefined {
  let n = name;
  const star = n.lastIndexOf('*');
  if (star >= 0) n = n.slice(star + 1);
  if (n.endsWith(')')) {
    const open = n.indexOf('(');
    if (open >= 0 && closingParen(n, open) === n.length - 1) n = n.slice(0, open);
  }
  n = n.trim();
  return n === '' ? undefined : n;
}

/**
 * `fn@location` (SpiderMonkey and JavaScriptCore), `@location`, `global code@…`, `get label@…`,
 * `forEach@[native code]`, `fn@1:234`. Names and URLs can both hold `@`: a URL after its scheme or
 * its first `/` (`http://user@host/`, `?u=me@example.com`, Vite's `/@react-refresh`,
 * `/node_modules/@scope/`), a name anywhere (`obj["@fn"]`, `@run`). A name's `@` is hardly ever
 * followed by what starts a location (a scheme, a path, `[native code]`), and a URL's `@` often is
 * followed by what reads as a scheme and a port (`example.com:1`), so the location starts at the
 * first `@` followed by what starts a location that reads as one. Else (a name's `@`, and a location
 * that is a bare file name) at the last `@` followed by a bare file name and a position
 * (`obj["@fn"]@Scratchpad/1:10:29`, `index.android.bundle:1:2`, `debugger eval code:1:5`). At most
 * `maxTries` `@`s are looked at each way, whatever the line holds.
 */
export function atLine(line: string): ParsedFrame | undefined {
  const text = line.trim();
  let at = text.indexOf('@');
  for (let tries = 0; at >= 0 && tries < maxTries; tries++, at = text.indexOf('@', at + 1)) {
    const rest = text.slice(at + 1);
    if (!locationStart(rest)) continue;
    const parsed = atLocation(rest);
    if (parsed) return frame(geckoName(text.slice(0, at)), parsed.loc, parsed.evalOrigin);
  }
  at = text.lastIndexOf('@');
  for (let tries = 0; at >= 0 && tries < maxTries; tries++, at = at > 0 ? text.lastIndexOf('@', at - 1) : -1) {
    const rest = text.slice(at + 1);
    // A text before the `@` that starts as a path does is a path holding `@` (`/srv/@scope/x.js:7`,
    // Node's uncaught-exception header), not a name.
    if (locationStart(rest) || locationStart(text.slice(0, at))) continue;
    const parsed = atLocation(rest);
    // A bare file name, but never a sentence with an address in it: that has no column.
    if (parsed?.loc.file !== undefined && (!parsed.loc.file.includes(' ') || parsed.loc.column !== undefined))
      return frame(geckoName(text.slice(0, at)), parsed.loc, parsed.evalOrigin);
  }
  // JavaScriptCore prints code without a location (eval'd code, code compiled from a string) as
  // `name@` or `@`, and its own kinds of code (`eval code`, `global code`) alone too.
  const name = text.endsWith('@') ? text.slice(0, -1) : text;
  if (jscCode.has(name)) return { function: name };
  // React Native's JavaScriptCore prints a native frame as `[native code]` alone.
  if (text === '[native code]') return { file: text };
  if (text.endsWith('@') && name.indexOf('@') < 0 && !name.includes(' ')) return frame(geckoName(name), {});
  return undefined;
}

const jscCode = new Set(['eval code', 'global code', 'module code', 'function code']);

/**
 * A file name as React Native's bundles are named, without a scheme or a path: a name with an
 * extension (`102.js` of a RAM bundle, `index.android.bundle`, `main.jsbundle`), so that a time
 * (`12:30:45`) or a count in a message line is never read as one.
 */
function bundleName(file: string): boolean {
  const dot = file.lastIndexOf('.');
  if (dot <= 0 || dot === file.length - 1) return false;
  for (let i = dot + 1; i < file.length; i++) {
    const c = file.charCodeAt(i) | 32;
    if (c < 97 || c > 122) return false;
  }
  return true;
}

/**
 * A frame without a name, printed as its location alone, by older JavaScriptCore (`http://x/app.js:1:2`)
 * and React Native's (`index.android.bundle:1:2`, `102.js:1:2956`), and Hermes's bytecode
 * location alone (`address at index.android.bundle:1:2345`, as inside its `at fn (…)` lines). The
 * line must be that location and nothing else, ending in `:line:column`, with no space in it.
 */
export function bareLine(line: string): ParsedFrame | undefined {
  let text = line.trim();
  if (text.startsWith('address at ')) text = text.slice(11);
  if (text === '' || text.includes(' ') || text.includes('\t')) return undefined;
  const loc = parseLocation(text);
  if (loc.file === undefined || loc.line === undefined || loc.column === undefined) return undefined;
  return text.startsWith('/') || schemeStart(text) || bundleName(loc.file) ? frame(undefined, loc) : undefined;
}
