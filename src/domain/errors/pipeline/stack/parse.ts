// A whole printed stack into exceptions and frames: its header (the uncaught-exception header Node
// prints, then `Type: message`, which may span lines: body.ts), and its body, read by reader.ts:
// the frame lines of every engine (frame-line.ts) and what Node adds when it prints an error itself
// (util.inspect, used for uncaught errors and console.error): own properties after a ` {` that
// ends the last frame line, linked errors in `[cause]: …` and AggregateError's `[errors]: [ … ]`
// (lib/internal/util/inspect.js, formatError), `... N lines matching cause stack trace ...`, and
// the `Node.js v24…` trailer. Lines are visited a bounded number of times each, so a stack costs
// time linear in its size.
import type { ParsedFrame } from './frame-line.ts';
import { bodyStart, layout, propertiesOpener, type Layout, type StackHint } from './body.ts';
import { isTrailer, Lines } from './lines.ts';
import { newException, Reader, unparsed, type LinkedException, type ParsedException } from './reader.ts';

export type { StackHint } from './body.ts';
export { maxFrames, maxLinked, type LinkedException, type ParsedException } from './reader.ts';

export interface ParsedStack extends ParsedException {
  linked: LinkedException[];
}

/**
 * A stack as its message lines (the header, `Type: message`) and its body (from the first frame
 * line on, own properties and linked errors included). The body recurs from event to event of one
 * bug, the message often does not; the two join back with `+`, and `parseStackBody(body)` gives
 * what `parseStackTrace` gives for the whole stack.
 */
export function splitStack(stack: string, hint?: StackHint): { message: string; frames: string } {
  const lines = new Lines(stack);
  const at = lines.at(bodyStart(lines, hint))?.offset ?? stack.length;
  return { message: stack.slice(0, at), frames: stack.slice(at) };
}

function readBody(all: Lines, at: Layout): ParsedStack {
  const lines = all.all();
  const reader = new Reader(lines, at.start);
  const exc = newException();
  reader.frames(exc, 0, false, undefined, at.opener);
  // After the own properties' closing `}`: only the trailer belongs; anything else is kept.
  for (; reader.i < lines.length; reader.i++) {
    const t = lines[reader.i]!.text;
    if (t.trim() === '' || isTrailer(t.trim())) continue;
    unparsed(exc, t);
  }
  const out: ParsedStack = {
    frames: exc.frames.reverse(),
    unparsed_lines: exc.unparsed_lines,
    unparsed_line_count: exc.unparsed_line_count,
    linked: reader.linked,
  };
  for (const l of out.linked) l.frames.reverse();
  return out;
}

/** Every exception a printed stack holds; frames innermost last. */
export function parseStackTrace(stack: string, hint?: StackHint): ParsedStack {
  const lines = new Lines(stack);
  return readBody(lines, layout(lines, hint));
}

/** The body `splitStack` cut from a stack: every line of it is a frame, decoration or unparsed. */
export function parseStackBody(body: string): ParsedStack {
  const lines = new Lines(body);
  return readBody(lines, { start: 0, opener: propertiesOpener(lines.all(), 0) });
}

/** The outer exception's frames, innermost last. */
export function parseStack(stack: string, hint?: StackHint): ParsedFrame[] {
  return parseStackTrace(stack, hint).frames;
}
