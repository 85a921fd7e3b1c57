// The shape of a JSON text, found in one pass over its bytes without recursion and before it is
// parsed: how deep its objects and arrays nest and how many there are. What walks a parsed value
// recurses, and parsed JSON costs far more than its text, so callers bound both before parsing
// (http/json-limits.ts for request bodies, the Sentry event depth rule). Malformed JSON is left
// to the parser, which refuses it.

export interface JsonLimits {
  /** Most levels of objects and arrays, the outermost being level 1. */
  depth: number;
  /** Most objects and arrays in all. */
  containers: number;
}

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
