// Names from the minified file (docs/api.md "Minified files"): when a map has no `sourcesContent`,
// nothing says which original function a position is in, and the map's name at the position is
// the name of the token there (the call site's callee), not of the function around it. The
// minified file itself still has that function: its scope is found in the minified code and the
// tokens of its name (`function Ce(`, `addClass:function(`, `Cart.total`) are mapped through the
// map to their original names, each kept as minified when the map names nothing exactly there.
// This is getsentry/symbolicator's scope-based naming (its js-source-scopes crate: ScopeIndex,
// NameResolver).
import type { CompactMap } from './compact-map.ts';
import type { MinifiedIndex } from './scope-types.ts';
import { enclosingScope, functionScopes } from './scopes.ts';

const identifier = /[\w$#]+/y;

export function indexMinified(text: string, file: string): MinifiedIndex {
  const starts = [0];
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
  const scopes = functionScopes(text, file);
  const tokenText = new Map<number, string>();
  for (const s of scopes) {
    for (const t of s.tokens) {
      identifier.lastIndex = t;
      const m = identifier.exec(text);
      // A quoted key (`"a-b":function`) is its own text, quotes and all: read what stands there.
      tokenText.set(t, m ? m[0] : text.slice(t, t + 64));
    }
  }
  return {
    lineStarts: Int32Array.from(starts),
    scopes,
    tokenText,
    bytes: starts.length * 4 + scopes.length * 120 + tokenText.size * 60,
  };
}

/** 1-based line and 0-based column of an offset. */
function position(index: MinifiedIndex, offset: number): { line: number; column: number } {
  let low = 0;
  let high = index.lineStarts.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (index.lineStarts[mid]! <= offset) low = mid;
    else high = mid - 1;
  }
  return { line: low + 1, column: offset - index.lineStarts[low]! };
}

/**
 * The original name of the function around a generated position (1-based line, 0-based column),
 * or undefined outside any named function.
 */
export function nameFromMinified(
  index: MinifiedIndex,
  map: CompactMap,
  line: number,
  column: number,
): string | undefined {
  const lineStart = index.lineStarts[line - 1];
  if (lineStart === undefined) return undefined;
  const scope = enclosingScope(index.scopes, lineStart + column);
  if (!scope) return undefined;
  const parts = scope.tokens.map((t) => {
    const at = position(index, t);
    return map.nameAt(at.line, at.column) ?? index.tokenText.get(t) ?? '';
  });
  const name = parts.filter((p) => p !== '').join('.');
  return name === '' ? undefined : name;
}
