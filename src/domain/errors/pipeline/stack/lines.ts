// A printed stack's lines, and what a line is when Node prints an error itself (util.inspect, used
// for uncaught errors and console.error; lib/internal/util/inspect.js, formatError): its
// uncaught-exception header, ` {` before own properties, `,` in an array, elisions, the trailer.
import { parseFrameLine, type ParsedFrame } from './frame-line.ts';

export interface Line {
  text: string;
  indent: number;
  /** Where the line begins in the stack text. */
  offset: number;
  /** The line read as a frame, once asked for (null: it is none). */
  frame?: ParsedFrame | null;
  /** The line without what inspect appends (`bare`) read as a frame, once asked for. */
  bareFrame?: ParsedFrame | null;
}

/**
 * `text` read as a frame line, `text` being the line or the line without what inspect appends (` {`
 * before own properties, `,` in an array): each is read once however often the header or the body
 * are looked for. A line of spaces alone is no frame, and is not read.
 */
export function frameOf(line: Line, text = line.text): ParsedFrame | undefined {
  if (line.indent === line.text.length) return undefined;
  if (text === line.text) {
    if (line.frame === undefined) line.frame = parseFrameLine(text) ?? null;
    return line.frame ?? undefined;
  }
  if (text !== bare(line.text)) return parseFrameLine(text);
  if (line.bareFrame === undefined) line.bareFrame = parseFrameLine(text) ?? null;
  return line.bareFrame ?? undefined;
}

/**
 * A stack's lines, split as far as they are asked for: cutting the message from the body by the
 * event's own message (done for every event, most of whose bodies are remembered) reads only the
 * message's lines. Lines end at `\n`; a `\r` before it is not part of the line.
 */
export class Lines {
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

export const isHeaderLine = (t: string): boolean => /:\d+$/.test(t.slice(-16)) && !parseFrameLine(t);

/**
 * Node's uncaught-exception header, which also heads an error's stack once Node decorated it (an
 * error thrown by code run in `vm`, printed as a cause): `file:line`, the source line, a caret
 * line, a blank line. Answers the index of the line after it, or `from` when there is none.
 */
export function headerEnd(lines: { at(i: number): Line | undefined }, from = 0): number {
  const first = lines.at(from)?.text ?? '';
  if (first.startsWith(' ') || !isHeaderLine(first)) return from;
  for (let i = from + 1; i <= from + 2 && lines.at(i); i++) {
    if (isCaretLine(lines.at(i)!.text)) return lines.at(i + 1)?.text.trim() === '' ? i + 2 : i + 1;
  }
  return from;
}

/** A frame line without what inspect appends: ` {` before own properties, `,` in an array. */
export const bare = (t: string): string => (t.endsWith(' {') ? t.slice(0, -2) : t.endsWith(',') ? t.slice(0, -1) : t);

export const isElision = (t: string): boolean => t.startsWith('... ') && t.endsWith(' ...');
export const isTrailer = (t: string): boolean =>
  t.startsWith('Node.js v') && /^Node\.js v\d+\.\d+\.\d+$/.test(t.slice(0, 40));

/** `Type: message`, `Type [CODE]: message`, `[Error: message]` (an error without a stack). */
export function errorHead(text: string): { type: string; message?: string } | undefined {
  let t = text;
  if (t.startsWith('[') && t.endsWith(']')) t = t.slice(1, -1);
  const m = /^([A-Za-z_$][\w$.]*(?: \[[\w-]+\])?)(?:: |:$|$)/.exec(t.slice(0, 300));
  if (!m) return undefined;
  const type = m[1]!;
  const message = t.length > type.length + 2 ? t.slice(type.length + 2) : undefined;
  return message === undefined ? { type } : { type, message };
}
