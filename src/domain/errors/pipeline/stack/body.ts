// Where a printed stack's body begins: the line after its header (`Type: message`, which may span
// any number of lines and hold anything, frame-shaped lines and braces included), and the line
// where Node's own properties open after it. Each line is looked at a bounded number of times, so
// this costs time linear in the stack.
import { bare, errorHead, frameOf, headerEnd, isElision, type Line, type Lines } from './lines.ts';

/** What the event says of its exception: lets its message lines be skipped whatever they hold. */
export interface StackHint {
  exception_type?: string;
  message?: string;
}

export interface Layout {
  /** The body's first line (frames, decorations, unparsed lines): the header is what precedes it. */
  start: number;
  /** The line whose ` {` opens the outer exception's own properties (Node's printing), or -1. */
  opener: number;
}

const isFrame = (line: Line): boolean => frameOf(line, bare(line.text)) !== undefined;

/** Lines a known format allows among frames: blanks, Node's elisions, V8 `at …` lines no reader reads. */
function isAmongFrames(line: Line): boolean {
  const t = line.text.trim();
  return t === '' || isElision(t) || (line.indent > 0 && t.startsWith('at '));
}

/**
 * The line opening Node's own properties of the outer exception, found from the bottom: a stack
 * whose last `}` at the margin comes after its last frame line has its properties indented under
 * it (inspect indents every line of a nested value, linked errors' messages included), up to the
 * line that opened them: the last frame line, `    at … {`, or an error's head line at the margin
 * when it has no frames (`Error: x {`, `[Error: x] {`). A printout cut short (at the stack's size
 * limit) has no `}`: there the opener is the last frame line at V8's indentation, ending in ` {`.
 */
export function propertiesOpener(lines: Line[], from: number): number {
  // Lines no format reads may follow the closing `}` (they are counted), but never a frame line:
  // a `}` above the last frame closes something in the message.
  let end = lines.length - 1;
  while (end > from && lines[end]!.text !== '}' && !isFrame(lines[end]!)) end--;
  if (end <= from || lines[end]!.text !== '}') return unclosedOpener(lines, from);
  for (let i = end - 1; i >= from; i--) {
    const line = lines[i]!;
    const t = line.text;
    if (t.trim() === '') continue;
    if (line.indent < 2) return t.endsWith(' {') ? i : -1;
    if (topFrameOpens(line)) return i;
  }
  return -1;
}

// V8 indents a frame by four: deeper lines ending in ` {` are linked errors' frames.
const topFrameOpens = (line: Line): boolean => line.indent <= 4 && line.text.endsWith(' {') && isFrame(line);

/** Own properties cut short: indented lines up from the bottom to a last frame line that opens them. */
function unclosedOpener(lines: Line[], from: number): number {
  for (let i = lines.length - 1; i >= from; i--) {
    const line = lines[i]!;
    if (line.text.trim() === '') continue;
    if (line.indent < 2) return -1;
    if (line.indent <= 4 && isFrame(line)) return topFrameOpens(line) ? i : -1;
  }
  return -1;
}

/**
 * The index of the line after the header when the stack prints the event's own message there,
 * else -1. V8 prints `${name}: ${message}` (name possibly decorated by inspect: `TypeError
 * [ERR_X]`, `[Error: …]`), so the first line must end with `: ` and the message's first line,
 * and each further line be the message's next line; the last may carry inspect's `]` and ` {`.
 * An empty message prints the type alone. Firefox and Safari print no header: -1.
 */
function hintedEnd(lines: Lines, start: number, hint: StackHint): number {
  const message = hint.message ?? '';
  if (message === '') {
    const first = lines.at(start)?.text;
    const type = hint.exception_type;
    return first !== undefined && [type, `[${type}]`, `${type} {`, `[${type}] {`].includes(first) ? start + 1 : -1;
  }
  const parts = message.split('\n');
  for (let k = 0; k < parts.length; k++) {
    const t = lines.at(start + k)?.text;
    if (t === undefined) return -1;
    const part = parts[k]!.endsWith('\r') ? parts[k]!.slice(0, -1) : parts[k]!;
    const want = k === 0 ? `: ${part}` : part;
    const ends = k === parts.length - 1 ? printedEnds : [''];
    const ok = ends.some((e) => (k === 0 ? t.length > want.length + e.length && t.endsWith(want + e) : t === want + e));
    if (!ok) return -1;
  }
  return start + parts.length;
}

/** What inspect may print after a message: `]` closing `[Error: …]`, ` {` opening own properties. */
const printedEnds = ['', ']', ' {', '] {'];

/**
 * Where the body begins when the stack does not print the event's message as the event has it
 * (Firefox and Safari print no header at all; a message can be absent, changed after the stack was
 * taken, or cut by an SDK). The body runs from the topmost frame line to the last one before Node's
 * own properties, and a line no format reads between two frames is the body's (a cause's head,
 * Bluebird's `From previous event:`, pony-cause's `caused by:`): it is counted, and the frames above
 * it, where the error was thrown, are read. Only a stack whose first line is `Type: message` (V8's
 * header; never a frame, even holding `@`) has a message that can hold frame-shaped lines; see
 * `messageEnd`. Without any frame line, the body begins after that first line (its lines are then
 * counted as unparsed), or where Node's own properties open.
 */
function unhintedStart(all: Line[], start: number, opener: number, hint: StackHint | undefined): number {
  const first = all[start]?.text ?? '';
  const headed = errorHead(first) !== undefined && !first.trimStart().startsWith('at ');
  const floor = headed ? start + 1 : start;
  let last = opener >= 0 ? opener : all.length - 1;
  while (last >= floor && !isFrame(all[last]!)) last--;
  if (last < floor) return opener >= 0 ? opener : Math.min(floor, all.length);
  // An event whose message is one line printed a one-line header: every line under it is the body's.
  const oneLine = hint?.message !== undefined && hint.message !== '' && !hint.message.includes('\n');
  let i = headed && !oneLine ? messageEnd(all, floor, last) : floor;
  while (!isFrame(all[i]!)) i++;
  return i;
}

/**
 * Without a message to match, the header of a `Type: message` stack ends at the first line no format
 * reads that follows a frame-shaped line under the first line, when a frame comes after it: a
 * message printing frames (`lookup failed:\n    at x (y:1:2)\nwhile resolving`) is told from a
 * body only by that line, so the frame-shaped lines above it are the message's. The frames below
 * it are all read, whatever lines no format reads come between them. Bluebird's long stack printed
 * without the event's message thus loses the frames above its first `From previous event:`; with
 * the message (as it is, or changed but one line), it keeps them.
 */
function messageEnd(all: Line[], floor: number, last: number): number {
  let framed = false;
  for (let j = floor; j < last; j++) {
    const line = all[j]!;
    if (isFrame(line)) framed = true;
    else if (framed && !isAmongFrames(line)) return j + 1;
  }
  return floor;
}

/** Where the body begins and where the outer exception's own properties open. */
export function layout(lines: Lines, hint: StackHint | undefined): Layout {
  const start = headerEnd(lines);
  // The message is looked for on the first line, then after Node's uncaught-exception header
  // (a message can itself hold a `file:line` line and a caret).
  let hinted = hint?.exception_type === undefined ? -1 : hintedEnd(lines, 0, hint);
  if (hinted < 0 && start > 0 && hint?.exception_type !== undefined) hinted = hintedEnd(lines, start, hint);
  const all = lines.all();
  const opener = propertiesOpener(all, start);
  if (hinted >= 0) {
    // A brace in the message is not an opener, but the head line of an error without frames may be.
    if (opener >= 0 && opener < hinted)
      return opener === hinted - 1 ? { start: opener, opener } : { start: hinted, opener: -1 };
    // Lines between the message and the first frame belong to the header: Chrome prints a
    // SecurityError's message again as `at Error: …` there. Without a frame, they are the body.
    let first = hinted;
    const last = opener >= 0 ? opener : all.length - 1;
    while (first <= last && !isFrame(all[first]!)) first++;
    return { start: first <= last ? first : hinted, opener };
  }
  return { start: unhintedStart(all, start, opener, hint), opener };
}

/**
 * Where the body begins, as `layout` finds it, without reading the whole stack in the common cases
 * (splitStack runs for every event): a frame right under the header, and no header line ending in
 * ` {` (so Node's own properties cannot open above the body). The header is the message printed as
 * the event has it, or, when the event's message is one line that the stack does not print (changed
 * after the stack was taken, or the stack's own), the one `Type: message` line `unhintedStart` takes.
 */
export function bodyStart(lines: Lines, hint: StackHint | undefined): number {
  const end = shortHeaderEnd(lines, hint);
  const next = end >= 0 ? lines.at(end) : undefined;
  if (next !== undefined && isFrame(next)) {
    let opens = false;
    for (let i = 0; i < end && !opens; i++) opens = lines.at(i)!.text.endsWith(' {');
    if (!opens) return end;
  }
  return layout(lines, hint).start;
}

function shortHeaderEnd(lines: Lines, hint: StackHint | undefined): number {
  if (hint?.exception_type === undefined) return -1;
  const printed = hintedEnd(lines, 0, hint);
  if (printed >= 0) return printed;
  const oneLine = hint.message !== undefined && hint.message !== '' && !hint.message.includes('\n');
  const first = lines.at(0)?.text ?? '';
  const headed = errorHead(first) !== undefined && !first.trimStart().startsWith('at ');
  return oneLine && headed && headerEnd(lines) === 0 ? 1 : -1;
}
