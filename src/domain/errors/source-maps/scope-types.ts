// The shapes the scope finders (scopes.ts, scopes-ast.ts, scopes-heuristic.ts) and the naming of
// minified frames (scope-naming.ts, compact-map.ts) share, apart so none imports another for a type.

export interface Scope {
  name: string;
  /** UTF-16 offsets in the source text, both inclusive. */
  start: number;
  end: number;
  /**
   * Where each part of the name stands in the text (`Class.member`: the class's name, then the
   * member's): in minified code these are the tokens a source map names (scope-naming.ts).
   */
  tokens: number[];
}

/** A minified file reduced to what naming needs: line offsets and function scopes with name tokens. */
export interface MinifiedIndex {
  lineStarts: Int32Array;
  scopes: Scope[];
  /** The tokens' texts, by offset (the file's text itself is not kept). */
  tokenText: Map<number, string>;
  /** Approximate bytes held. */
  bytes: number;
}
