// A whole printed stack into exceptions and frames: the message lines, the frame lines of every
// engine (frame-line.ts), and what Node adds when it prints an error itself (util.inspect, used
// for uncaught errors and console.error): the uncaught-exception header (`file:line`, the source
// line, a caret, a blank line), own properties after a ` {` that ends the last frame line, linked
// errors in `[cause]: …` and AggregateError's `[errors]: [ … ]` (lib/internal/util/inspect.js,
// formatError), `... N lines matching cause stack trace ...`, and the `Node.js v24…` trailer.
// Lines are visited once each, so a stack costs time linear in its size.
import { parseFrameLine, type ParsedFrame } from './frame-line.ts';

export interface ParsedException {
  frames: ParsedFrame[];
  /** Lines among the frames that no format reads, as printed (the first `maxUnparsedKept`, clipped). */
  unparsed_lines: string[];
  unparsed_line_count: number;
}

/** An error printed inside another's own properties. */
export interface LinkedException extends ParsedException {
  /** Where it hangs: `cause`, or `errors[N]` of an AggregateError (Sentry's mechanism.source). */
  source: string;
  /** Index in `linked` of the exception it hangs on; absent for the outer exception. */
  parent?: number;
  exception_type: string;
  message?: string;
}

export interface ParsedStack extends ParsedException {
  linked: LinkedException[];
}

/** What the event says of its exception: lets its message lines be skipped whatever they hold. */
export interface StackHint {
  exception_type?: string;
  message?: string;
}

export const maxFrames = 256;
export const maxLinked = 32;
const maxUnparsedKept = 50;
const maxUnparsedLength = 1024;

interface Line {
  text: string;
  indent: number;
  /** Where the line begins in the stack text. */
  offset: number;
}

/**
 * A stack's lines, split as far as they are asked for: cutting the message from the body (done for
 * every event, most of whose bodies are remembered) reads only the lines before the first frame.
 */
class Lines {
  private readonly text: string;
  private readonly lines: Line[] = [];
  private next = 0;

  constructor(text: string) {
    this.text = text;
  }

  at(i: number): Line | undefined {
    while (this.lines.length <= i && this.next <= this.text.length) this.pull();
    return this.lines[i];
  }

  all(): Line[] {
    while (this.next <= this.text.length) this.pull();
    return this.lines;
  }

  private pull(): void {
    const { text } = this;
    const start = this.next;
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end);
    let indent = 0;
    while (indent < line.length && line.charCodeAt(indent) === 32) indent++;
    this.lines.push({ text: line, indent, offset: start });
    this.next = end + 1;
  }
}

const isCaretLine = (t: string): boolean => {
  const s = t.trim();
  if (s === '') return false;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) !== 94) return false;
  return true;
};

const isHeaderLine = (t: string): boolean => /:\d+$/.test(t.slice(-16)) && !parseFrameLine(t);

/**
 * Node's uncaught-exception header, which also heads an error's stack once Node decorated it (an
 * error thrown by code run in `vm`, printed as a cause): `file:line`, the source line, a caret
 * line, a blank line. Answers the index of the line after it, or `from` when there is none.
 */
function headerEnd(lines: { at(i: number): Line | undefined }, from = 0): number {
  const first = lines.at(from)?.text ?? '';
  if (first.startsWith(' ') || !isHeaderLine(first)) return from;
  for (let i = from + 1; i <= from + 2 && lines.at(i); i++) {
    if (isCaretLine(lines.at(i)!.text)) return lines.at(i + 1)?.text.trim() === '' ? i + 2 : i + 1;
  }
  return from;
}

/** A frame line without what inspect appends: ` {` before own properties, `,` in an array. */
const bare = (t: string): string => (t.endsWith(' {') ? t.slice(0, -2) : t.endsWith(',') ? t.slice(0, -1) : t);

const isElision = (t: string): boolean => t.startsWith('... ') && t.endsWith(' ...');
const isTrailer = (t: string): boolean => t.startsWith('Node.js v') && /^Node\.js v\d+\.\d+\.\d+$/.test(t.slice(0, 40));

/** `Type: message`, `Type [CODE]: message`, `[Error: message]` (an error without a stack). */
function errorHead(text: string): { type: string; message?: string } | undefined {
  let t = text;
  if (t.startsWith('[') && t.endsWith(']')) t = t.slice(1, -1);
  const m = /^([A-Za-z_$][\w$.]*(?: \[[\w-]+\])?)(?:: |:$|$)/.exec(t.slice(0, 300));
  if (!m) return undefined;
  const type = m[1]!;
  const message = t.length > type.length + 2 ? t.slice(type.length + 2) : undefined;
  return message === undefined ? { type } : { type, message };
}

type Exc = ParsedException;

class Reader {
  readonly lines: Line[];
  readonly linked: LinkedException[] = [];
  i: number;

  constructor(lines: Line[], start: number) {
    this.lines = lines;
    this.i = start;
  }

  /**
   * One exception from its first frame line on: frames and unparsed lines until the block ends.
   * `base` is the indentation of its head line (0 at the top); inside an `[errors]` array its last
   * line ends with `,`. Returns after its own properties, when it has any.
   */
  frames(exc: Exc, base: number, nested: boolean, index: number | undefined): void {
    const { lines } = this;
    while (this.i < lines.length) {
      const line = lines[this.i]!;
      const t = line.text.trim();
      if (nested && (line.indent <= base || t === '}' || t === '},' || t === ']' || t === '],')) return;
      this.i++;
      if (t === '' || isElision(t) || isTrailer(t)) continue;
      let text = line.text;
      const opens = text.endsWith(' {');
      if (opens) text = text.slice(0, -2);
      const ends = nested && text.endsWith(',');
      if (ends) text = text.slice(0, -1);
      const frame = parseFrameLine(text);
      if (frame) {
        if (exc.frames.length < maxFrames) exc.frames.push(frame);
      } else if (opens && exc.frames.length === 0 && exc.unparsed_line_count === 0 && errorHead(text.trim())) {
        // An error without frames whose own properties follow its head (`AggregateError: … {`).
      } else {
        exc.unparsed_line_count++;
        if (exc.unparsed_lines.length < maxUnparsedKept) exc.unparsed_lines.push(line.text.slice(0, maxUnparsedLength));
      }
      if (opens) {
        this.properties(base, index);
        return;
      }
      if (ends) return;
    }
  }

  /** Own properties up to the `}` at `base`: `[cause]` and `[errors]` are read, the rest skipped. */
  properties(base: number, parent: number | undefined): void {
    const { lines } = this;
    while (this.i < lines.length) {
      const line = lines[this.i]!;
      const t = line.text.trim();
      if (line.indent <= base && (t === '}' || t === '},')) {
        this.i++;
        return;
      }
      if (line.indent < base && t !== '') return;
      if (line.indent === base + 2 && t.startsWith('[cause]: ')) {
        this.linkedAt(t.slice(9), base + 2, 'cause', parent);
      } else if (line.indent === base + 2 && t === '[errors]: [') {
        this.i++;
        this.errors(base + 2, parent);
      } else {
        this.i++;
      }
    }
  }

  /** AggregateError's `[errors]: [` … `]`: each element an error (or another value, skipped). */
  errors(base: number, parent: number | undefined): void {
    const { lines } = this;
    let n = 0;
    while (this.i < lines.length) {
      const line = lines[this.i]!;
      const t = line.text.trim();
      if (line.indent <= base && (t === ']' || t === '],')) {
        this.i++;
        return;
      }
      if (line.indent < base && t !== '') return;
      if (line.indent === base + 2) this.linkedAt(t, base + 2, `errors[${n++}]`, parent);
      else this.i++;
    }
  }

  /** A linked error whose head line (`Type: message`) is the current line, read from `text` on. */
  linkedAt(first: string, base: number, source: string, parent: number | undefined): void {
    let text = first;
    if (isHeaderLine(text)) {
      // A decorated stack: the header's lines are indented with the error's, so it is read in place.
      const end = headerEnd([
        { text, indent: 0, offset: 0 },
        ...this.lines.slice(this.i + 1, this.i + 4).map((l) => ({ text: l.text.trim(), indent: 0, offset: 0 })),
      ]);
      if (end > 0 && this.lines[this.i + end]) {
        this.i += end;
        text = this.lines[this.i]!.text.trim();
      }
    }
    this.i++;
    const head = errorHead(text.endsWith(',') ? text.slice(0, -1) : text);
    if (!head || this.linked.length >= maxLinked) return;
    const exc: Exc = { frames: [], unparsed_lines: [], unparsed_line_count: 0 };
    const index = this.linked.length;
    const linked: LinkedException = {
      source,
      exception_type: head.type,
      frames: exc.frames,
      unparsed_lines: exc.unparsed_lines,
      unparsed_line_count: 0,
    };
    if (parent !== undefined) linked.parent = parent;
    this.linked.push(linked);
    // Message lines go on until the first frame (a message can span lines).
    const messageLines: string[] = head.message === undefined ? [] : [head.message];
    const { lines } = this;
    if (!text.endsWith(',') && !text.endsWith(']')) {
      while (this.i < lines.length) {
        const line = lines[this.i]!;
        const t = line.text.trim();
        if (line.indent < base || parseFrameLine(bare(t)) || t === '}' || t === '},') break;
        messageLines.push(line.text.slice(Math.min(line.indent, base + 2)));
        this.i++;
      }
      this.frames(exc, base, true, index);
    }
    if (messageLines.length > 0) linked.message = messageLines.join('\n');
    linked.unparsed_line_count = exc.unparsed_line_count;
  }
}

/**
 * Where the body of a stack begins: its first frame line, after the uncaught-exception header and
 * the event's own `Type: message` lines. A stack with no frame line at all has its body right after
 * those, so that its lines are counted as unparsed, not taken for message lines.
 */
function bodyStart(lines: Lines, hint: StackHint | undefined): number {
  const start = headerEnd(lines);
  let messageEnd = start;
  const first = lines.at(start)?.text ?? '';
  // The event's own `Type: message` may span lines, and hold text that reads as a frame.
  const head =
    hint?.exception_type === undefined
      ? undefined
      : hint.message
        ? `${hint.exception_type}: ${hint.message}`
        : hint.exception_type;
  if (head !== undefined && printedAt(lines, start, head)) messageEnd = start + head.split('\n').length;
  // The first line of a V8 stack is `Type: message`; it is never a frame, even holding `@`.
  else if (errorHead(first) && !first.trimStart().startsWith('at ')) messageEnd = start + 1;
  // Printed by Node without frames, the head line opens the own properties: the body starts there.
  if (first.endsWith(' {') && errorHead(first.slice(0, -2))) return start;
  for (let i = messageEnd; lines.at(i); i++) if (parseFrameLine(bare(lines.at(i)!.text))) return i;
  let end = start;
  while (end < messageEnd && lines.at(end)) end++;
  return end;
}

/** Whether `text` (lines joined by `\n`) is printed from line `from` on. */
function printedAt(lines: Lines, from: number, text: string): boolean {
  let at = 0;
  for (let i = from; ; i++) {
    const line = lines.at(i);
    if (!line) return false;
    const nl = text.indexOf('\n', at);
    const part = nl < 0 ? text.slice(at) : text.slice(at, nl);
    if (line.text !== part) return false;
    if (nl < 0) return true;
    at = nl + 1;
  }
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

function readBody(all: Lines, start: number): ParsedStack {
  const lines = all.all();
  const reader = new Reader(lines, start);
  const exc: Exc = { frames: [], unparsed_lines: [], unparsed_line_count: 0 };
  reader.frames(exc, 0, false, undefined);
  // After the own properties' closing `}`: only the trailer belongs; anything else is kept.
  for (; reader.i < lines.length; reader.i++) {
    const t = lines[reader.i]!.text;
    if (t.trim() === '' || isTrailer(t.trim())) continue;
    exc.unparsed_line_count++;
    if (exc.unparsed_lines.length < maxUnparsedKept) exc.unparsed_lines.push(t.slice(0, maxUnparsedLength));
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
  return readBody(lines, bodyStart(lines, hint));
}

/** The body `splitStack` cut from a stack: every line of it is a frame, decoration or unparsed. */
export function parseStackBody(body: string): ParsedStack {
  return readBody(new Lines(body), 0);
}

/** The outer exception's frames, innermost last. */
export function parseStack(stack: string, hint?: StackHint): ParsedFrame[] {
  return parseStackTrace(stack, hint).frames;
}
