// One printed frame line into a frame, for every engine's format: V8's and Hermes's here,
// SpiderMonkey's and JavaScriptCore's in gecko-line.ts. Each reader is a function of the line
// alone, in the style of sentry-javascript's stack line parsers, but without regular expressions
// over the line: lines can be 64 KiB (a data: URL), and string searches from the ends keep each
// read linear in the line's length (CWE-1333).
import { atLine, bareLine } from './gecko-line.ts';
import { closingParen, endsWithPosition, parseLocation, positive, type Location } from './location.ts';
import { frame, isSpace, maxTries, type ParsedFrame } from './parsed-frame.ts';

export type { ParsedFrame } from './parsed-frame.ts';

// --- V8 (Chrome, Edge, Node, Deno, Bun) and Hermes -------------------------------------------

// V8 prints a wasm frame as `wasm://wasm/<module>:wasm-function[<index>]:0x<module offset>`
// (WebAssembly Web API §"Stack traces"); the CallSite API gives line 1 and the offset plus one as
// the column, which is what is kept.
function wasmLocation(text: string): Location | undefined {
  const at = text.lastIndexOf(':wasm-function[');
  if (at < 0) return undefined;
  const close = text.indexOf(']:0x', at);
  if (close < 0) return undefined;
  const offset = Number.parseInt(text.slice(close + 4), 16);
  if (!Number.isSafeInteger(offset) || !/^[0-9a-f]+$/i.test(text.slice(close + 4, close + 20))) return undefined;
  return { file: text.slice(0, at) || undefined, line: 1, column: offset + 1 };
}

/**
 * V8's eval location, `eval at <fn> (<origin>), <own location>`, where the origin is a location or
 * another eval (V8's FormatEvalOrigin). The frame is placed at its own location when the evaluated
 * code has a name of its own (a `//# sourceURL=` such as webpack's `webpack-internal:///…`),
 * else at the outermost real location of the chain, which is in a file a source map can cover.
 */
function v8Eval(text: string): Location | undefined {
  let rest = text;
  let own: Location | undefined;
  for (let depth = 0; rest.startsWith('eval at ') && depth < 64; depth++) {
    const open = rest.indexOf(' (', 8);
    if (open < 0) return undefined;
    const close = closingParen(rest, open + 1);
    if (close < 0) return undefined;
    if (depth === 0 && rest.startsWith(', ', close + 1)) own = parseLocation(rest.slice(close + 3));
    rest = rest.slice(open + 2, close);
  }
  if (own?.file !== undefined && own.file !== '<anonymous>') return own;
  return wasmLocation(rest) ?? parseLocation(rest);
}

// `native code` is EdgeHTML's (Edge 44).
const v8Natives = new Set(['native', 'native code', '<anonymous>']);
// Bun prints `at eval (unknown)` and `at unknown` for frames it has no location for.
const v8Unknown = new Set(['unknown', 'unknown location']);

/**
 * Deno prints the eval of a `//# sourceURL`-named script as `webpack-internal:///./src/x.js,
 * <anonymous>:1:27`: the name, then the anonymous script's line and column.
 */
function denoNamedEval(text: string): Location | undefined {
  const at = text.lastIndexOf(', <anonymous>:');
  if (at <= 0 || !endsWithPosition(text)) return undefined;
  const loc = parseLocation(text.slice(at + 2));
  return { ...loc, file: text.slice(0, at) };
}

/** A V8 location in parentheses, or undefined when `text` is not one. */
function v8Location(text: string): { loc: Location; evalOrigin?: string } | undefined {
  if (text.startsWith('eval at ')) {
    const loc = v8Eval(text);
    return loc ? { loc, evalOrigin: text } : undefined;
  }
  // Hermes: `address at index.android.bundle:1:234` (bytecode offsets print the same way).
  if (text.startsWith('address at ')) return { loc: parseLocation(text.slice(11)) };
  // Chrome before 73 marked an awaited frame inside the location: `(async http://x/a.js:1:2)`.
  if (text.startsWith('async ')) return v8Location(text.slice(6));
  if (v8Natives.has(text)) return { loc: { file: text } };
  if (v8Unknown.has(text)) return { loc: {} };
  // `at async Promise.all (index 0)`: a Promise combinator's element, no source location.
  if (text.startsWith('index ') && positive(text, 6, text.length) !== undefined) return { loc: {} };
  if (text === 'index 0') return { loc: {} };
  const wasm = wasmLocation(text);
  if (wasm) return { loc: wasm };
  const deno = denoNamedEval(text);
  if (deno) return { loc: deno };
  if (endsWithPosition(text)) return { loc: parseLocation(text) };
  return undefined;
}

/**
 * Safari's extension frames, reported inside V8-style lines: `at fn@safari-extension:(//id/x.js:1:2)`
 * and `at safari-web-extension:(//id/x.js:1:2)`, for `safari-extension://id/x.js`.
 */
function safariExtension(rest: string): ParsedFrame | undefined {
  for (const scheme of ['safari-extension:(', 'safari-web-extension:(']) {
    const at = rest.indexOf(scheme);
    if (at < 0 || !rest.endsWith(')') || (at > 0 && rest.charCodeAt(at - 1) !== 64)) continue;
    const loc = parseLocation(`${scheme.slice(0, -1)}${rest.slice(at + scheme.length, -1)}`);
    return frame(at > 0 ? rest.slice(0, at - 1) : undefined, loc);
  }
  return undefined;
}

/** V8's name part: `async ` awaited and ` [as alias]` (the property it was called through) dropped. */
function v8Name(name: string): string | undefined {
  let n = name;
  if (n.startsWith('async ')) n = n.slice(6);
  if (n.endsWith(']')) {
    const as = n.lastIndexOf(' [as ');
    if (as >= 0) n = n.slice(0, as);
  }
  n = n.trim();
  // Deno and Bun print an anonymous function's name as `<anonymous>`, bundlers' wrappers `?`; V8
  // prints none.
  return n === '' || n === '<anonymous>' || n === '?' ? undefined : n;
}

/** Whether every `)` in `text` closes a `(` before it, and every `(` is closed. */
function balanced(text: string): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 40) depth++;
    else if (c === 41 && --depth < 0) return false;
  }
  return depth === 0;
}

/**
 * `at fn (location)`, `at location`, `at async fn (location)`, `at new Foo (location)`,
 * `at fn [as alias] (location)`, `at eval (eval at …)`, `at Array.map (native)`,
 * `at async Promise.all (index 0)`, React Native's `at fn(file.js:1:2)`, Hermes's
 * `at fn (address at file:1:2)`, V8's wasm frames.
 */
export function v8Line(line: string): ParsedFrame | undefined {
  let start = 0;
  while (start < line.length && isSpace(line.charCodeAt(start))) start++;
  if (!line.startsWith('at ', start)) return undefined;
  let end = line.length;
  while (end > start && isSpace(line.charCodeAt(end - 1))) end--;
  const rest = line.slice(start + 3, end).trimStart();
  if (rest === '') return undefined;
  const extension = safariExtension(rest);
  if (extension) return extension;
  if (rest.endsWith(')')) {
    // The name rarely holds ` (` but a path can: the first ` (` whose text reads as a location with
    // balanced parentheses (a name `a (b)` leaves `b) (file:1:2`), else the first that reads as one.
    for (const balancedOnly of [true, false]) {
      let open = rest.indexOf(' (');
      for (let tries = 0; open >= 0 && tries < maxTries; tries++) {
        const inside = rest.slice(open + 2, -1);
        const parsed = !balancedOnly || balanced(inside) ? v8Location(inside) : undefined;
        if (parsed) return frame(v8Name(rest.slice(0, open)), parsed.loc, parsed.evalOrigin);
        open = rest.indexOf(' (', open + 2);
      }
    }
    // React Native prints no space: `at fn(file.js:1:2)`.
    const paren = rest.indexOf('(');
    if (paren > 0 && rest.charCodeAt(paren - 1) !== 32) {
      const parsed = v8Location(rest.slice(paren + 1, -1));
      if (parsed) return frame(v8Name(rest.slice(0, paren)), parsed.loc, parsed.evalOrigin);
    }
  }
  // A frame without a name prints its location alone: `at file:1:2`, `at async file:1:2`, and
  // Hermes's bytecode location `at address at index.android.bundle:1:2` as in parentheses.
  let bare = rest.startsWith('async ') ? rest.slice(6) : rest;
  if (bare.startsWith('address at ') && endsWithPosition(bare)) bare = bare.slice(11);
  const wasm = wasmLocation(bare);
  if (wasm) return frame(undefined, wasm);
  if (bare.startsWith('eval at ')) {
    const loc = v8Eval(bare);
    if (loc) return frame(undefined, loc, bare);
  }
  if (endsWithPosition(bare) || v8Natives.has(bare)) return frame(undefined, parseLocation(bare));
  if (v8Unknown.has(bare)) return {};
  return undefined;
}

/** A frame line of any engine's format, or undefined. */
export function parseFrameLine(line: string): ParsedFrame | undefined {
  return v8Line(line) ?? atLine(line) ?? bareLine(line);
}
