// The body of a printed stack, read line by line from its first frame line: frames, lines no
// format reads, and what Node prints after them (own properties, `[cause]: …`, AggregateError's
// `[errors]: [ … ]`, `... N lines matching cause stack trace ...`, the `Node.js v…` trailer).
// Lines are visited once each, so a body costs time linear in its size.
import { parseFrameLine, type ParsedFrame } from './frame-line.ts';
import { bare, errorHead, frameOf, headerEnd, isElision, isHeaderLine, isTrailer, type Line } from './lines.ts';

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

export const maxFrames = 256;
export const maxLinked = 32;
const maxUnparsedKept = 50;
const maxUnparsedLength = 1024;

type Exc = ParsedException;

export const newException = (): Exc => ({ frames: [], unparsed_lines: [], unparsed_line_count: 0 });

export function unparsed(exc: Exc, text: string): void {
  exc.unparsed_line_count++;
  if (exc.unparsed_lines.length < maxUnparsedKept) exc.unparsed_lines.push(text.slice(0, maxUnparsedLength));
}

export class Reader {
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
   * line ends with `,`. Returns after its own properties, when it has any. A nested exception's own
   * properties open at any frame line ending in ` {` (Node indents whatever a message holds); the
   * outer one's only at `opener`, found from the bottom of the stack (body.ts), since its message
   * lines may end in ` {` too.
   */
  frames(exc: Exc, base: number, nested: boolean, index: number | undefined, opener = -1): void {
    const { lines } = this;
    while (this.i < lines.length) {
      const line = lines[this.i]!;
      const t = line.text.trim();
      if (nested && (line.indent <= base || t === '}' || t === '},' || t === ']' || t === '],')) return;
      const at = this.i++;
      if (t === '' || isElision(t) || isTrailer(t)) continue;
      let text = line.text;
      const opens = nested ? text.endsWith(' {') : at === opener;
      if (opens && text.endsWith(' {')) text = text.slice(0, -2);
      const ends = nested && text.endsWith(',');
      if (ends) text = text.slice(0, -1);
      const frame = frameOf(line, text);
      if (frame) {
        if (exc.frames.length < maxFrames) exc.frames.push(frame);
      } else if (
        opens &&
        exc.frames.length === 0 &&
        exc.unparsed_line_count === 0 &&
        (!nested || errorHead(text.trim()))
      ) {
        // An error without frames whose own properties follow its head (`AggregateError: … {`).
      } else {
        unparsed(exc, line.text);
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
    const exc = newException();
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
