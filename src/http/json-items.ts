// A large JSON body of the form `{"<key>": [item, item, …]}`, kept as its bytes with each item's
// place, and parsed one item at a time as the handler asks. A 20 MiB batch then never exists as
// one 20 MiB string plus its whole object graph (web memory stays bounded), and the handler can
// give the event loop back between items (single requests are not stuck behind the parse).
//
// Only that exact shape takes this path; any other body (other keys, a repeated key, an escaped
// key, anything unexpected) is parsed whole as before, so the answers never change (a body of too
// many items is refused with the schema's field, without parsing any of them). Scanning bytes
// is safe for UTF-8: every byte of a multi-byte sequence is ≥ 0x80, so `"`, `\`, brackets and
// commas are never part of one (RFC 3629 §3), and an invalid sequence decodes to U+FFFD the same
// whether the whole body or one item is decoded (WHATWG Encoding's decoder stops at an ASCII byte).
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import bourne from '@hapi/bourne';
import { AppError } from '../app-error.ts';
import { bodyJsonLimits, bodyOverLimit, refuseCostlyJson } from './json-limits.ts';

const ws = (b: number | undefined) => b === 0x20 || b === 0x09 || b === 0x0a || b === 0x0d;

/** Whether the body's bytes may still be read (a pooled buffer is not, once given back: body-buffers.ts). */
export interface ItemSource {
  readonly open: boolean;
}

const alwaysOpen: ItemSource = { open: true };

/** One item of a split body: parsed (once) when the handler asks. */
export class JsonItem {
  private readonly bytes: Buffer;
  private readonly start: number;
  private readonly end: number;
  private readonly source: ItemSource;

  constructor(bytes: Buffer, start: number, end: number, source: ItemSource = alwaysOpen) {
    this.bytes = bytes;
    this.start = start;
    this.end = end;
    this.source = source;
  }

  get size(): number {
    return this.end - this.start;
  }

  /**
   * The item's value. Its SyntaxError means the whole body is not JSON, and the error middleware
   * answers it as it answers the body parser's (errors.ts `toAppError`).
   */
  parse(): unknown {
    // The buffer may hold another request's body by now.
    if (!this.source.open) throw new Error('a batch item was read after its request ended');
    // The body parser's own rules: `__proto__` keys are refused (prototype poisoning).
    return bourne.parse(this.bytes.toString('utf8', this.start, this.end), { protoAction: 'error' }) as unknown;
  }
}

/** An item's value, whether it came split or whole. */
export const itemValue = (item: unknown): unknown => (item instanceof JsonItem ? item.parse() : item);

/** Bytes scanned between turns given back to the event loop (~1 ms here). */
const scanSliceBytes = 512 * 1024;

/**
 * The items of `{"<key>": [ … ]}` (RFC 8259 whitespace anywhere between tokens), or undefined when
 * the body has any other shape. Items are checked only for where they end: each is parsed later.
 * The scan refuses, as it goes, a body nested or sized past the body limits (json-limits.ts), and,
 * once it has seen the whole shape, one of more than `maxItems` items: no more than `maxItems` are
 * ever held, so a body of millions of tiny items never becomes millions of objects. The event loop
 * is given back after each slice of bytes, so a 20 MiB scan never holds other requests for long.
 */
export async function splitJsonItems(
  body: Buffer,
  key: string,
  maxItems: number,
  source: ItemSource = alwaysOpen,
): Promise<JsonItem[] | undefined> {
  let i = 0;
  const skip = () => {
    while (ws(body[i])) i++;
  };
  const expect = (text: string): boolean => {
    skip();
    if (body.toString('latin1', i, i + text.length) !== text) return false;
    i += text.length;
    return true;
  };
  if (!expect('{') || !expect(JSON.stringify(key)) || !expect(':') || !expect('[')) return undefined;
  const items: JsonItem[] = [];
  let count = 0;
  const add = (end: number) => {
    if (++count <= maxItems) items.push(new JsonItem(body, start, end, source));
  };
  // Levels below the items (the object and the array around them are two), and objects and arrays so far.
  const { depth: maxDepth, containers: maxContainers } = bodyJsonLimits;
  let depth = 0;
  let containers = 2;
  let start = i;
  let blank = true;
  let turn = i + scanSliceBytes;
  for (; i < body.length; i++) {
    if (i >= turn) {
      await yieldToEventLoop();
      turn = i + scanSliceBytes;
    }
    const b = body[i]!;
    if (b === 0x22) {
      // A string: to its closing quote, stepping over escapes.
      for (i++; i < body.length && body[i] !== 0x22; i++) if (body[i] === 0x5c) i++;
      blank = false;
    } else if (b === 0x5b || b === 0x7b) {
      if (++depth + 2 > maxDepth) throw bodyOverLimit('depth');
      if (++containers > maxContainers) throw bodyOverLimit('containers');
      blank = false;
    } else if (b === 0x5d || b === 0x7d) {
      if (depth > 0) depth--;
      else if (b === 0x7d) return undefined;
      else {
        // The array's end: `[]` has no item; `[1,]` has an empty last one, which will not parse.
        if (!(blank && count === 0)) add(i);
        i++;
        if (!expect('}') || (skip(), i !== body.length)) return undefined;
        if (count > maxItems) throw tooManyItems(key, maxItems);
        return items;
      }
    } else if (b === 0x2c && depth === 0) {
      add(i);
      start = i + 1;
      blank = true;
    } else if (!ws(b)) blank = false;
  }
  return undefined;
}

/** What the route's schema would answer for the array, said before any item is parsed. */
function tooManyItems(key: string, max: number): AppError {
  const field = `body.${key}`;
  const message = `at most ${max} items`;
  return new AppError('invalid_request', `invalid request: ${field}: ${message}`, {
    details: { fields: [{ field, message }] },
  });
}

/**
 * The body parser's strict mode for a body that is parsed whole: an object or an array, or nothing;
 * refused before it is parsed when it passes the nesting or size limits (json-limits.ts).
 */
export function parseWhole(body: Buffer): unknown {
  if (body.length === 0) return {};
  refuseCostlyJson(body);
  const text = body.toString('utf8');
  if (!/^[ \t\n\r]*[[{]/.test(text)) throw new SyntaxError('only an object or an array');
  return bourne.parse(text, { protoAction: 'error' }) as unknown;
}
