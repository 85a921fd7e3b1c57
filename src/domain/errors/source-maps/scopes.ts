// The enclosing function of a position in original source (a frame shows the original
// name of the function it ran in, not the name at the call site, which is what a source map's
// `names` entry at that position holds). Bundlers emit no scope information, so `sourcesContent`
// is parsed, once per source file (CompactMap keeps the result): by a real parser in the language
// the file's extension names (scopes-ast.ts), else by the brace-matching heuristic
// (scopes-heuristic.ts) for what the parser refuses or what is too big to parse in the worker.
import { astScopes, type Lang } from './scopes-ast.ts';
import { heuristicScopes } from './scopes-heuristic.ts';
import type { Scope } from './scope-types.ts';

// A parse holds ~55 bytes of AST on the V8 heap per source character until it is walked (measured
// with oxc-parser on 1 MB of TypeScript): 512 Ki characters is ~28 MB for a moment, which the
// worker's 128 MB old space can spare next to its map cache. Bigger sources are vendored bundles,
// not code anyone wrote, and get the heuristic.
export const maxParsedLength = 512 * 1024;

const byExtension: Record<string, Lang[]> = {
  ts: ['ts'],
  mts: ['ts'],
  cts: ['ts'],
  tsx: ['tsx'],
  // JSX is common in .js files, and a .js file without it parses as JSX all the same.
  js: ['jsx'],
  mjs: ['jsx'],
  cjs: ['jsx'],
  jsx: ['jsx'],
};

/** The languages to try for a source path, its query and fragment (`App.vue?vue&type=script`) aside. */
export function languagesFor(path: string): Lang[] {
  const file = path.replace(/[?#].*$/, '');
  const ext = /\.([a-z]+)$/i.exec(file)?.[1]?.toLowerCase();
  return (ext && byExtension[ext]) || ['ts', 'jsx'];
}

/** Function scopes of a source, by start offset; class members are named `Class.member`. */
export function functionScopes(source: string, path = ''): Scope[] {
  if (source.length <= maxParsedLength) {
    for (const lang of languagesFor(path)) {
      const scopes = astScopes(source, lang);
      if (scopes) return scopes;
    }
  }
  return heuristicScopes(source);
}

/** The innermost named function scope around an offset. */
export function enclosingScope(scopes: readonly Scope[], offset: number): Scope | undefined {
  let best: Scope | undefined;
  for (const s of scopes) {
    if (s.start > offset) break;
    if (s.end >= offset && (!best || s.start >= best.start)) best = s;
  }
  return best;
}

/** The innermost named function around an offset. */
export function enclosingFunction(scopes: readonly Scope[], offset: number): string | undefined {
  return enclosingScope(scopes, offset)?.name;
}
