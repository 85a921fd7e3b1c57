// A parsed source map in a few typed arrays (issue 3: "parsed maps are cached per worker with a
// memory bound"; 100k events across 50 releases' maps in under 300 MB). trace-mapping keeps each
// decoded segment as its own small array, ~7.7× the map's JSON size on the heap (measured on a
// 1.1 MB esbuild map); packed into columns, with source lines found by offset instead of split
// into strings, that map holds ~2.2 MB (1.5 MB of arrays, 0.5 MB of source text, offsets and
// scopes). Lookups follow trace-mapping's `originalPositionFor` exactly (greatest lower bound; on
// an exact hit, the first segment of that column), and the tests compare the two.
import { TraceMap, decodedMappings, sourceContentFor } from '@jridgewell/trace-mapping';
import { functionScopes, type Scope } from './scopes.ts';

export interface OriginalPosition {
  source: string;
  /** 1-based. */
  line: number;
  /** 0-based. */
  column: number;
  name: string | null;
}

export interface OriginalSource {
  text: string;
  /** Offset of each line's first character. */
  lineStarts: Int32Array;
  scopes: Scope[];
}

export class CompactMap {
  private readonly sources: string[];
  private readonly contents: (string | null)[];
  private readonly names: string[];
  /** Segments of generated line i are [lineStart[i], lineStart[i + 1]). */
  private readonly lineStart: Int32Array;
  private readonly genColumn: Int32Array;
  /** -1: a segment with no original position. */
  private readonly source: Int32Array;
  private readonly srcLine: Int32Array;
  private readonly srcColumn: Int32Array;
  /** -1: no name. */
  private readonly name: Int32Array;
  private readonly originals = new Map<number, OriginalSource | null>();
  /** Approximate heap bytes held, for the cache's bound. */
  readonly bytes: number;

  constructor(json: string) {
    const map = new TraceMap(json);
    const decoded = decodedMappings(map);
    let count = 0;
    for (const line of decoded) count += line.length;
    this.lineStart = new Int32Array(decoded.length + 1);
    this.genColumn = new Int32Array(count);
    this.source = new Int32Array(count);
    this.srcLine = new Int32Array(count);
    this.srcColumn = new Int32Array(count);
    this.name = new Int32Array(count);
    let at = 0;
    decoded.forEach((line, i) => {
      this.lineStart[i] = at;
      for (const segment of line) {
        const s = segment as readonly number[];
        this.genColumn[at] = s[0]!;
        this.source[at] = s.length > 1 ? s[1]! : -1;
        this.srcLine[at] = s.length > 1 ? s[2]! : 0;
        this.srcColumn[at] = s.length > 1 ? s[3]! : 0;
        this.name[at] = s.length === 5 ? s[4]! : -1;
        at += 1;
      }
    });
    this.lineStart[decoded.length] = at;
    this.sources = map.resolvedSources.map((s) => s ?? '');
    this.contents = this.sources.map((s) => sourceContentFor(map, s));
    this.names = [...map.names];
    // Typed arrays, strings (one byte a character unless they need two), and for each source
    // text half its size again for line offsets and scopes, computed on first use (measured:
    // 0.2× for offsets, up to 0.5× for scopes on a file of many small functions).
    const wide = (x: string) => {
      for (let i = 0; i < x.length; i++) if (x.charCodeAt(i) > 0xff) return true;
      return false;
    };
    const strings = (xs: readonly (string | null)[], extra = 1) =>
      xs.reduce((a, x) => a + (x === null ? 8 : 40 + extra * x.length * (wide(x) ? 2 : 1)), 0);
    this.bytes = 4 * (this.lineStart.length + 5 * count) + strings(this.sources) + strings(this.names) + strings(this.contents, 1.5);
  }

  originalPositionFor(line: number, column: number): OriginalPosition | null {
    const l = line - 1;
    if (l < 0 || l >= this.lineStart.length - 1) return null;
    const start = this.lineStart[l]!;
    let low = start;
    let high = this.lineStart[l + 1]! - 1;
    let index = -1;
    while (low <= high) {
      const mid = low + ((high - low) >> 1);
      const cmp = this.genColumn[mid]! - column;
      if (cmp === 0) {
        index = mid;
        while (index > start && this.genColumn[index - 1] === column) index -= 1;
        break;
      }
      if (cmp < 0) low = mid + 1;
      else high = mid - 1;
    }
    if (index === -1) index = low - 1;
    if (index < start) return null;
    const src = this.source[index]!;
    if (src === -1) return null;
    const name = this.name[index]!;
    return { source: this.sources[src]!, line: this.srcLine[index]! + 1, column: this.srcColumn[index]!, name: name === -1 ? null : (this.names[name] ?? null) };
  }

  /** The original source's text, line offsets and function scopes (computed on first use), or null without `sourcesContent`. */
  original(source: string): OriginalSource | null {
    const i = this.sources.indexOf(source);
    if (i === -1) return null;
    let entry = this.originals.get(i);
    if (entry === undefined) {
      const text = this.contents[i] ?? null;
      if (text === null) {
        entry = null;
      } else {
        const starts = [0];
        for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
        entry = { text, lineStarts: Int32Array.from(starts), scopes: functionScopes(text) };
      }
      this.originals.set(i, entry);
    }
    return entry;
  }
}

/** Line `n` (0-based) of an original source, without its line break; undefined past the end. */
export function lineOf(source: OriginalSource, n: number): string | undefined {
  if (n < 0 || n >= source.lineStarts.length) return undefined;
  const start = source.lineStarts[n]!;
  const end = n + 1 < source.lineStarts.length ? source.lineStarts[n + 1]! - 1 : source.text.length;
  return source.text.slice(start, end).replace(/\r$/, '');
}
