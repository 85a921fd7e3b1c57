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
import { jsonShape, type JsonLimits } from '../json-shape.ts';

/** /v1 request bodies (and each batch body): docs/api.md "Foundation". */
export const bodyJsonLimits: JsonLimits = { depth: 64, containers: 1_000_000 };

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
