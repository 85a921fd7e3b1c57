// What a JSON text may cost before it is parsed. Nesting: everything that walks a parsed value
// (the storable check, JSON.stringify, zod, the scrubber) recurses, and V8's JSON.stringify throws
// "Maximum call stack size exceeded" a few thousand levels down, so a body nested deeper than any
// real one is refused before anything walks it. Size: parsed JSON costs far more than its text (an
// empty object is 3 bytes of `{},` and ~60 bytes of heap), so a 20 MiB body of empty objects would
// hold ~400 MiB; the objects and arrays of one text are capped (a full batch of 1000 events holds
// under 500,000). Both are found in one pass over the bytes, without recursion, before they are
// parsed: about a quarter of what JSON.parse costs for the same bytes. Malformed JSON is left to
// the parser, which refuses it.
import { AppError } from '../app-error.ts';

export interface JsonLimits {
  /** Most levels of objects and arrays, the outermost being level 1. */
  depth: number;
  /** Most objects and arrays in all. */
  containers: number;
}

/** /v1 request bodies (and each batch body): docs/api.md "Foundation". */
export const bodyJsonLimits: JsonLimits = { depth: 64, containers: 1_000_000 };

export interface JsonShape {
  /** The deepest level reached (up to the first limit passed). */
  depth: number;
  /** Which limit the text passes, if any. */
  over?: 'depth' | 'containers';
}

/** The shape of the JSON text `bytes` (UTF-8) as far as `limits` let the scan go. */
export function jsonShape(bytes: Uint8Array, limits: JsonLimits): JsonShape {
  let depth = 0;
  let deepest = 0;
  let containers = 0;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const c = bytes[i]!;
    if (c === 0x22) {
      // A string, to its closing quote, stepping over escapes: no byte of a multi-byte UTF-8
      // sequence is below 0x80 (RFC 3629), so none is taken for a quote or a bracket.
      for (i++; i < n; i++) {
        const d = bytes[i];
        if (d === 0x22) break;
        if (d === 0x5c) i++;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > deepest && (deepest = depth) > limits.depth) return { depth: deepest, over: 'depth' };
      if (++containers > limits.containers) return { depth: deepest, over: 'containers' };
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return { depth: deepest };
}

/** The errors of a body past `bodyJsonLimits`: 400 for nesting, 413 for size (what the limit is about). */
export function bodyOverLimit(over: 'depth' | 'containers', what = 'the request body'): AppError {
  const { depth, containers } = bodyJsonLimits;
  return over === 'depth'
    ? new AppError('invalid_request', `${what} is nested deeper than ${depth} levels of objects and arrays`, {
        details: { reason: 'too_deep', max_depth: depth },
      })
    : new AppError('invalid_request', `${what} holds more than ${containers} objects and arrays`, {
        status: 413,
        details: { reason: 'too_many_values', max_containers: containers },
      });
}

/** Throws when a /v1 body passes `bodyJsonLimits`. */
export function refuseCostlyJson(bytes: Uint8Array): void {
  const { over } = jsonShape(bytes, bodyJsonLimits);
  if (over) throw bodyOverLimit(over);
}
