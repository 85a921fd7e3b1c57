// Where a frame ran, as engines print it: `file:line:col`, `file:line`, or a bare name such as
// `native`. Read from the end, by hand rather than by a regular expression, so that a location of
// any length (a data: URL, a URL with a long query) costs one pass over it and a hostile one
// cannot make a pattern backtrack (CWE-1333).

export interface Location {
  file?: string;
  line?: number;
  column?: number;
}

const isDigit = (code: number): boolean => code >= 48 && code <= 57;

/** A positive safe integer from `text[from, to)`, all digits; undefined otherwise. */
export function positive(text: string, from: number, to: number): number | undefined {
  if (to <= from || to - from > 15) return undefined;
  for (let i = from; i < to; i++) if (!isDigit(text.charCodeAt(i))) return undefined;
  const n = Number(text.slice(from, to));
  return n > 0 ? n : undefined;
}

/** The start of the run of digits that ends at `end` (exclusive), scanning back at most 15. */
function digitsBefore(text: string, end: number): number {
  let i = end;
  while (i > 0 && end - i < 16 && isDigit(text.charCodeAt(i - 1))) i--;
  return i;
}

/**
 * `file:line:col` or `file:line`; without a trailing `:<digits>` the whole text is the file. A
 * file is never empty: `:1:2` alone has no file, only a line and column (JavaScriptCore prints
 * `fn@1:234` for code without a URL, as React Native's production bundles are).
 */
export function parseLocation(text: string): Location {
  const lastStart = digitsBefore(text, text.length);
  if (lastStart === text.length || lastStart === 0 || text.charCodeAt(lastStart - 1) !== 58 /* : */) {
    return lastStart === 0 && text.length > 0 ? { line: positive(text, 0, text.length) } : { file: text };
  }
  const last = positive(text, lastStart, text.length);
  const prevEnd = lastStart - 1;
  const prevStart = digitsBefore(text, prevEnd);
  if (prevStart < prevEnd && (prevStart === 0 || text.charCodeAt(prevStart - 1) === 58)) {
    const line = positive(text, prevStart, prevEnd);
    const file = prevStart === 0 ? '' : text.slice(0, prevStart - 1);
    return withFile(file, line, last);
  }
  return withFile(text.slice(0, prevEnd), last, undefined);
}

function withFile(file: string, line: number | undefined, column: number | undefined): Location {
  const out: Location = {};
  if (file !== '') out.file = file;
  if (line !== undefined) out.line = line;
  if (column !== undefined) out.column = column;
  return out;
}

/** Whether `text` ends in `:<digits>` (a line, or a line and a column). */
export function endsWithPosition(text: string): boolean {
  const start = digitsBefore(text, text.length);
  return start < text.length && start > 0 && text.charCodeAt(start - 1) === 58;
}

/**
 * The index of the `)` that closes the `(` at `open`, counting nested pairs; -1 when unbalanced.
 * Eval origins nest (`eval at f (eval at g (a.js:1:2), <anonymous>:3:4)`).
 */
export function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 40) depth++;
    else if (c === 41 && --depth === 0) return i;
  }
  return -1;
}
