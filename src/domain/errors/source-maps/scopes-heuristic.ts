// Function scopes without a parser: the fallback of scopes.ts for a source the parser refuses (a
// syntax error, a .vue or .svelte file, CoffeeScript) or one too big to parse within the worker's
// heap. Braces are matched outside strings and comments, and each `{` is labelled by the header
// before it (declaration, method, assigned function or arrow, class). Known misses: a `{` inside
// parameters (TypeScript object types, destructuring), `${…}` in template literals, regex
// literals holding quotes or braces, JSX text. A miss falls back to the map's own name.
import type { Scope } from './scope-types.ts';

const keywords = new Set([
  'if',
  'for',
  'while',
  'switch',
  'catch',
  'with',
  'function',
  'return',
  'else',
  'do',
  'try',
  'finally',
]);

const headers: [RegExp, 'fn' | 'class'][] = [
  [/\bclass\s+([\w$]+)[^{}]*$/d, 'class'],
  [/\bfunction\s*\*?\s*([\w$]+)\s*(?:<[^{}]*>)?\([^{}]*\)[^{}()]*$/d, 'fn'],
  [/([\w$]+)\s*[:=]\s*(?:async\s+)?function\b[^{}]*$/d, 'fn'],
  [/([\w$]+)\s*[:=]\s*(?:async\s+)?(?:\([^{}]*\)|[\w$]+)\s*(?::[^{}=]*)?=>\s*$/d, 'fn'],
  [
    /(?:^|[;{}\s,])(?:(?:async|static|get|set|public|private|protected|override)\s+)*\*?([\w$]+)\s*(?:<[^{}]*>)?\([^{}]*\)\s*(?::[^{}]*)?$/d,
    'fn',
  ],
];

/** The header's name, its kind, and where the name starts in `before`. */
function headerName(before: string): { name: string; kind: 'fn' | 'class'; at: number } | undefined {
  for (const [pattern, kind] of headers) {
    const m = pattern.exec(before);
    if (m && !keywords.has(m[1]!)) return { name: m[1]!, kind, at: m.indices![1]![0] };
  }
  return undefined;
}

/** Function scopes of a source, by start offset; class methods are named `Class.method`. */
export function heuristicScopes(source: string): Scope[] {
  const scopes: Scope[] = [];
  const open: { start: number; name?: string; kind?: 'fn' | 'class'; tokens: number[] }[] = [];
  let headerStart = 0;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '/' && source[i + 1] === '/') {
      i = source.indexOf('\n', i);
      if (i < 0) break;
      continue;
    }
    if (c === '/' && source[i + 1] === '*') {
      i = source.indexOf('*/', i + 2);
      if (i < 0) break;
      i += 1;
      continue;
    }
    if (c === '"' || c === "'" || c === '`') {
      for (i++; i < source.length && source[i] !== c; i++) if (source[i] === '\\') i++;
      continue;
    }
    if (c === '{') {
      const from = Math.max(headerStart, i - 300);
      const header = headerName(source.slice(from, i));
      const parent = open.findLast((o) => o.kind !== undefined);
      const member = header && header.kind === 'fn' && parent?.kind === 'class';
      const name = member ? `${parent.name}.${header.name}` : header?.name;
      const tokens = header ? [...(member ? parent.tokens : []), from + header.at] : [];
      open.push({ start: i, name, kind: header?.kind, tokens });
      headerStart = i + 1;
    } else if (c === '}') {
      const o = open.pop();
      if (o?.kind === 'fn' && o.name) scopes.push({ name: o.name, start: o.start, end: i, tokens: o.tokens });
      headerStart = i + 1;
    } else if (c === ';') {
      headerStart = i + 1;
    }
  }
  return scopes.sort((a, b) => a.start - b.start);
}
