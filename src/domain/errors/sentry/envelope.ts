// The Sentry envelope format (https://develop.sentry.dev/sdk/data-model/envelopes/), read the way
// relay reads it: a line of JSON headers, then items, each a line of JSON headers and a payload.
// A payload whose headers give `length` is exactly that many bytes (and may hold newlines); one
// without runs to the next newline or the end. One newline may end the envelope. Payloads are
// read as they stream in (EnvelopeReader): the caller says which item types it keeps, and of every
// other item nothing is kept at all, not even its headers: its payload is counted and skipped as it
// passes. A request then holds one header line, one kept payload and one chunk of the body,
// whatever the envelope holds; the item count is capped, so its work is bounded too.
//
// Every answer to a malformed envelope says where it broke, so that a developer writing a tunnel
// or an SDK can act on it (malformed → 400 with a message).
import bourne from '@hapi/bourne';
import { AppError } from '../../../app-error.ts';

/** An item the reader was told to keep. */
export interface EnvelopeItem {
  /** The item's `type` (event, transaction, session, attachment…). */
  type: string;
  headers: Record<string, unknown>;
  payload: Buffer;
}

export interface Envelope {
  headers: Record<string, unknown>;
  /** The kept items, in order. */
  items: EnvelopeItem[];
  /** Every item, kept or dropped. */
  count: number;
}

export interface EnvelopeReaderOptions {
  /** Whether an item's payload is kept (all are, unless said). */
  keep?: (type: string) => boolean;
  /** Most bytes a kept payload may have; more is 413. */
  maxKept?: number;
  /** Most bytes of a header line; more is 400. */
  maxLine?: number;
  /** Most items, kept or not; more is 413. */
  maxItems?: number;
}

const newline = 0x0a;
/** JSON's whitespace (RFC 8259): blank lines between items, as SDKs that pad them send, are tolerated. */
const isBlank = (b: number) => b === 0x0a || b === 0x0d || b === 0x20 || b === 0x09;

const malformed = (message: string) => new AppError('invalid_request', `malformed envelope: ${message}`);

/** A line of JSON that must be an object; `what` names it in the error. */
function headersOf(line: Buffer, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    // The body parser's rule: a `__proto__` key is refused, never merged (prototype poisoning).
    value = bourne.parse(line.toString('utf8'), { protoAction: 'error' });
  } catch {
    throw malformed(`the ${what} are not a line of JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw malformed(`the ${what} are not a JSON object`);
  return value as Record<string, unknown>;
}

/** The item being read; only a kept one has its headers and payload. */
interface OpenItem {
  type: string;
  kept?: { headers: Record<string, unknown>; parts: Buffer[] };
  /** Declared `length`, and the bytes of it still to come; undefined for a payload that runs to a newline. */
  length?: number;
  remaining?: number;
  size: number;
}

/** Reads an envelope chunk by chunk (`push`), then `end()` answers it or throws 400/413. */
export class EnvelopeReader {
  private state: 'headers' | 'itemHeaders' | 'payload' | 'afterPayload' = 'headers';
  private line: Buffer[] = [];
  private lineBytes = 0;
  private current: OpenItem | undefined;
  /** The last item read, for the message when what follows it is wrong. */
  private last = { type: '', size: 0 };
  private envelopeHeaders: Record<string, unknown> | undefined;
  private readonly items: EnvelopeItem[] = [];
  private count = 0;
  private readonly keep: (type: string) => boolean;
  private readonly maxKept: number;
  private readonly maxLine: number;
  private readonly maxItems: number;

  constructor(options: EnvelopeReaderOptions = {}) {
    this.keep = options.keep ?? (() => true);
    this.maxKept = options.maxKept ?? Number.MAX_SAFE_INTEGER;
    this.maxLine = options.maxLine ?? Number.MAX_SAFE_INTEGER;
    this.maxItems = options.maxItems ?? Number.MAX_SAFE_INTEGER;
  }

  /** The envelope's headers, once their line has been read whole. */
  get headers(): Record<string, unknown> | undefined {
    return this.envelopeHeaders;
  }

  push(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length) {
      if (this.state === 'itemHeaders' && this.lineBytes === 0) {
        // Between items, whitespace is stepped over byte by byte and never made into a line: a
        // body of blank lines costs a scan, not a line (and its allocations) each.
        while (at < chunk.length && isBlank(chunk[at]!)) at++;
        if (at === chunk.length) return;
      }
      if (this.state === 'headers' || this.state === 'itemHeaders') {
        const nl = chunk.indexOf(newline, at);
        this.addLine(chunk.subarray(at, nl < 0 ? chunk.length : nl));
        if (nl < 0) return;
        at = nl + 1;
        this.lineDone();
      } else if (this.state === 'payload') {
        const c = this.current!;
        if (c.remaining !== undefined) {
          const take = Math.min(c.remaining, chunk.length - at);
          this.addPayload(chunk.subarray(at, at + take));
          c.remaining -= take;
          at += take;
          if (c.remaining === 0) {
            this.finishItem();
            this.state = 'afterPayload';
          }
        } else {
          const nl = chunk.indexOf(newline, at);
          this.addPayload(chunk.subarray(at, nl < 0 ? chunk.length : nl));
          if (nl < 0) return;
          at = nl + 1;
          this.finishItem();
          this.state = 'itemHeaders';
        }
      } else {
        if (chunk[at] !== newline)
          throw malformed(
            `item ${this.count} (${this.last.type}) is not followed by a newline after its ${this.last.size} bytes`,
          );
        at += 1;
        this.state = 'itemHeaders';
      }
    }
  }

  end(): Envelope {
    if (this.state === 'headers') this.lineDone();
    else if (this.state === 'itemHeaders' && this.lineBytes > 0) {
      this.lineDone();
    }
    if (this.state === 'payload') {
      const c = this.current!;
      if (c.remaining !== undefined && c.remaining > 0)
        throw malformed(
          `item ${this.count} (${c.type}) declares ${c.length} bytes but ${c.length! - c.remaining} follow its headers`,
        );
      this.finishItem();
    }
    this.state = 'afterPayload';
    return { headers: this.envelopeHeaders!, items: this.items, count: this.count };
  }

  private addLine(part: Buffer): void {
    if (part.length === 0) return;
    this.lineBytes += part.length;
    if (this.lineBytes > this.maxLine) {
      const what = this.state === 'headers' ? 'the envelope headers are' : `the headers of item ${this.count + 1} are`;
      throw malformed(`${what} longer than ${this.maxLine} bytes`);
    }
    this.line.push(Buffer.from(part));
  }

  private takeLine(): Buffer {
    const line = Buffer.concat(this.line, this.lineBytes);
    this.line = [];
    this.lineBytes = 0;
    return line;
  }

  private lineDone(): void {
    const line = this.takeLine();
    if (this.state === 'headers') {
      this.envelopeHeaders = headersOf(line, 'envelope headers');
      this.state = 'itemHeaders';
      return;
    }
    const n = ++this.count;
    if (n > this.maxItems)
      throw new AppError('invalid_request', `the envelope holds more than ${this.maxItems} items`, { status: 413 });
    const headers = headersOf(line, `headers of item ${n}`);
    const type = headers.type;
    if (typeof type !== 'string' || type === '') throw malformed(`item ${n} has no "type"`);
    const length = headers.length;
    const item: OpenItem = { type, size: 0 };
    if (this.keep(type)) item.kept = { headers, parts: [] };
    if (length !== undefined && length !== null) {
      if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0)
        throw malformed(`item ${n} has a "length" that is not a whole number of bytes`);
      if (item.kept && length > this.maxKept) throw tooLarge(n, type, this.maxKept);
      item.length = length;
      item.remaining = length;
    }
    this.current = item;
    this.state = 'payload';
    if (item.remaining === 0) {
      this.finishItem();
      this.state = 'afterPayload';
    }
  }

  private addPayload(part: Buffer): void {
    if (part.length === 0) return;
    const c = this.current!;
    c.size += part.length;
    if (!c.kept) return;
    if (c.size > this.maxKept) throw tooLarge(this.count, c.type, this.maxKept);
    // Copied: a chunk of a stream may be reused once it is handed on.
    c.kept.parts.push(Buffer.from(part));
  }

  private finishItem(): void {
    const c = this.current!;
    if (c.kept)
      this.items.push({ type: c.type, headers: c.kept.headers, payload: Buffer.concat(c.kept.parts, c.size) });
    this.last = { type: c.type, size: c.size };
    this.current = undefined;
  }
}

const tooLarge = (n: number, type: string, max: number) =>
  new AppError('invalid_request', `item ${n} (${type}) is larger than ${max} bytes`, { status: 413 });

/** A whole envelope in one buffer, every payload kept. */
export function parseEnvelope(body: Buffer, options: EnvelopeReaderOptions = {}): Envelope {
  const reader = new EnvelopeReader(options);
  reader.push(body);
  return reader.end();
}
