// The frame one printed frame line gives, shared by the readers of each engine's format
// (frame-line.ts for V8 and Hermes, gecko-line.ts for SpiderMonkey and JavaScriptCore).
import type { Location } from './location.ts';

export interface ParsedFrame {
  /** The function's name as the engine printed it (docs/api.md "Stacks"). */
  function?: string;
  file?: string;
  line?: number;
  column?: number;
  /** The location as printed when the code ran in `eval` or `new Function`: the eval chain. */
  eval_origin?: string;
}

export const isSpace = (c: number): boolean => c === 32 || c === 9;

// At most this many candidate split points of a line are read as a location: a name or a path may
// hold the separator itself (` (`, `@`), but trying every one of a hostile line's would be quadratic.
export const maxTries = 8;

export function frame(name: string | undefined, loc: Location, evalOrigin?: string): ParsedFrame {
  const out: ParsedFrame = {};
  if (name !== undefined && name !== '') out.function = name;
  if (loc.file !== undefined) out.file = loc.file;
  if (loc.line !== undefined) out.line = loc.line;
  if (loc.column !== undefined) out.column = loc.column;
  if (evalOrigin !== undefined) out.eval_origin = evalOrigin;
  return out;
}
