// Parses `Error.stack` text into frames (SPEC.md capture rule 1), in the style of
// sentry-javascript's stack parsers: small `[priority, parseLine]` pairs tried in order, each line
// capped before any regex sees it (no catastrophic back-tracking on hostile input). Engines print
// innermost first; frames come out innermost last, as SPEC.md orders them.

export interface ParsedFrame {
  function?: string;
  file?: string;
  line?: number;
  column?: number;
}

type LineParser = (line: string) => ParsedFrame | undefined;

/** Longer lines are not frames any engine prints (a data: URL at most); they are skipped. */
export const maxLineLength = 2048;
export const maxFrames = 256;

const num = (s: string | undefined): number | undefined => {
  if (s === undefined) return undefined;
  const n = Number(s);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
};

/** `file:line:col`, `file:line` or a bare location such as `native` or `<anonymous>`. */
function location(text: string): ParsedFrame {
  const m = /^(.*?):(\d+)(?::(\d+))?$/.exec(text);
  if (!m) return { file: text };
  return { file: m[1], line: num(m[2]), column: num(m[3]) };
}

function cleanName(name: string): string | undefined {
  // `fn [as alias]` names the same function; `async fn` is fn awaited.
  const trimmed = name.replace(/^async\s+/, '').replace(/\s+\[as [^\]]*\]$/, '').trim();
  return trimmed === '' ? undefined : trimmed;
}

// V8 (Chrome, Edge, Node, Deno): `    at fn (file:1:2)`, `    at file:1:2`, `at async fn (…)`,
// `at new Foo (…)`, `at eval (eval at fn (file:1:2), <anonymous>:3:4)`, `at Array.map (native)`,
// `at async Promise.all (index 0)`.
const v8: LineParser = (line) => {
  const m = /^\s*at (.*)$/.exec(line);
  if (!m) return undefined;
  const rest = m[1]!.trim();
  const withName = /^(.*?) \((.*)\)$/.exec(rest);
  if (!withName) return location(rest.replace(/^async\s+/, ''));
  const name = cleanName(withName[1]!);
  let where = withName[2]!;
  // For eval'd code only the eval call site is in a file a source map covers.
  const evalAt = /^eval at [^(]*\((.*?)\)(?:, .*)?$/.exec(where) ?? /^eval at [^,]*, (.*)$/.exec(where);
  if (evalAt) where = evalAt[1]!;
  if (/^index \d+$/.test(where)) return { function: name, file: '<native>' };
  const loc = location(where);
  return { function: name, ...loc };
};

// SpiderMonkey (Firefox) and JavaScriptCore (Safari): `fn@file:1:2`, `@file:1:2`,
// `global code@file:1:2`, `forEach@[native code]`, Firefox's eval form
// `fn@file line 10 > eval:1:5` and its nested-closure names such as `outer/<@…`.
const gecko: LineParser = (line) => {
  const at = line.indexOf('@');
  if (at < 0) return undefined;
  const name = line.slice(0, at).trim();
  const where = line.slice(at + 1).trim();
  // Only frame-shaped lines: an e-mail address in a message line is not a frame.
  if (/\s/.test(name) && !/^(global|module|eval) code$/.test(name)) return undefined;
  if (where !== '[native code]' && !/:\d+$/.test(where)) return undefined;
  const fn = name === '' ? undefined : name.replace(/\/<+$/, '').replace(/\*$/, '') || undefined;
  if (where === '[native code]') return { function: fn, file: '[native code]' };
  const evalSite = /^(.*?) line (\d+) > (?:eval|Function)/.exec(where);
  if (evalSite) return { function: fn, file: evalSite[1], line: num(evalSite[2]) };
  return { function: fn, ...location(where) };
};

// JavaScriptCore without a name prints the bare location: `http://x/app.js:1:2`.
const bareUrl: LineParser = (line) => {
  const t = line.trim();
  if (!/^(?:[a-z][a-z0-9+.-]*:\/\/|\/)[^\s]*:\d+(?::\d+)?$/i.test(t)) return undefined;
  return location(t);
};

// Tried in priority order; the first that answers wins.
const parsers: [priority: number, parse: LineParser][] = [
  [10, v8],
  [20, gecko],
  [30, bareUrl],
];

export function parseStackLine(line: string): ParsedFrame | undefined {
  if (line.length > maxLineLength) return undefined;
  for (const [, parse] of parsers) {
    const frame = parse(line);
    if (frame && (frame.file || frame.function)) return frame;
  }
  return undefined;
}

// The first line of a V8 stack is `Type: message`, which can contain `@`: not a frame.
const messageLine = /^[\w$.]*(Error|Exception)\w*: /;

/**
 * A stack as its message lines and its frame lines (from the first line that is a frame on): the
 * frame lines recur from event to event of one bug, the message often does not. `message`
 * keeps its line break, so the two join back with `+`; parsing `frames` gives what parsing the
 * whole stack does.
 */
export function splitStack(stack: string): { message: string; frames: string } {
  let start = 0;
  while (start <= stack.length) {
    const nl = stack.indexOf('\n', start);
    const end = nl < 0 ? stack.length : nl;
    const line = stack.slice(start, end > start && stack[end - 1] === '\r' ? end - 1 : end);
    if (!messageLine.test(line) && parseStackLine(line)) {
      return { message: stack.slice(0, start), frames: stack.slice(start) };
    }
    if (nl < 0) break;
    start = nl + 1;
  }
  return { message: stack, frames: '' };
}

/** Frames innermost last; the message lines before the frames are not frames and are skipped. */
export function parseStack(stack: string): ParsedFrame[] {
  const frames: ParsedFrame[] = [];
  for (const line of stack.split(/\r?\n/)) {
    if (frames.length === 0 && messageLine.test(line)) continue;
    const frame = parseStackLine(line);
    if (frame) frames.push(frame);
    if (frames.length >= maxFrames) break;
  }
  return frames.reverse();
}
