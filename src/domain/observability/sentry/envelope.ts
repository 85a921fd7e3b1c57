// The Sentry envelope format (https://develop.sentry.dev/sdk/data-model/envelopes/), read the way
// relay reads it: a line of JSON headers, then items, each a line of JSON headers and a payload.
// A payload whose headers give `length` is exactly that many bytes (and may hold newlines); one
// without runs to the next newline or the end. One newline may end the envelope. Payloads stay
// slices of the body (no copy): the caller decides what to parse and what to drop by item type.
//
// Every answer to a malformed envelope says where it broke, so that a developer writing a tunnel
// or an SDK can act on it (CONTRACT.md "Sentry compatibility": malformed → 400 with a message).
import bourne from '@hapi/bourne';
import { AppError } from '../../../errors.ts';

export interface EnvelopeItem {
  /** The item's `type` (event, transaction, session, attachment…). */
  type: string;
  headers: Record<string, unknown>;
  payload: Buffer;
}

export interface Envelope {
  headers: Record<string, unknown>;
  items: EnvelopeItem[];
}

const newline = 0x0a;

const malformed = (message: string) => new AppError('invalid_request', `malformed envelope: ${message}`);

/** A line of JSON that must be an object; `what` names it in the error. */
function headersAt(body: Buffer, start: number, end: number, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    // The body parser's rule: a `__proto__` key is refused, never merged (prototype poisoning).
    value = bourne.parse(body.toString('utf8', start, end), { protoAction: 'error' });
  } catch {
    throw malformed(`the ${what} are not a line of JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw malformed(`the ${what} are not a JSON object`);
  return value as Record<string, unknown>;
}

/** Where the line starting at `start` ends: its newline, or the end of the body. */
const lineEnd = (body: Buffer, start: number): number => {
  const at = body.indexOf(newline, start);
  return at < 0 ? body.length : at;
};

export function parseEnvelope(body: Buffer): Envelope {
  const headerEnd = lineEnd(body, 0);
  const headers = headersAt(body, 0, headerEnd, 'envelope headers');
  const items: EnvelopeItem[] = [];
  let at = headerEnd + 1;
  while (at < body.length) {
    const n = items.length + 1;
    const end = lineEnd(body, at);
    // Blank lines between items are tolerated, as relay does for SDKs that pad them.
    if (body.subarray(at, end).toString('latin1').trim() === '') {
      at = end + 1;
      continue;
    }
    const itemHeaders = headersAt(body, at, end, `headers of item ${n}`);
    const type = itemHeaders.type;
    if (typeof type !== 'string' || type === '') throw malformed(`item ${n} has no "type"`);
    const length = itemHeaders.length;
    let payload: Buffer;
    if (length === undefined || length === null) {
      const payloadEnd = lineEnd(body, end + 1);
      payload = body.subarray(Math.min(end + 1, body.length), payloadEnd);
      at = payloadEnd + 1;
    } else {
      if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0)
        throw malformed(`item ${n} has a "length" that is not a whole number of bytes`);
      const start = end + 1;
      if (start + length > body.length)
        throw malformed(
          `item ${n} (${type}) declares ${length} bytes but ${Math.max(0, body.length - start)} follow its headers`,
        );
      payload = body.subarray(start, start + length);
      at = start + length;
      if (at < body.length && body[at] !== newline)
        throw malformed(`item ${n} (${type}) is not followed by a newline after its ${length} bytes`);
      at += 1;
    }
    items.push({ type, headers: itemHeaders, payload });
  }
  return { headers, items };
}
