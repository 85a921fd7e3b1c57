// A parsed source map in a few typed arrays ("parsed maps are cached per worker with a
// memory bound"; 100k events across 50 releases' maps in under 300 MB). `mappings` is decoded
// straight into columns (mappings.ts), never into trace-mapping's per-segment arrays (~7.7× the
// JSON on the heap): the largest map an upload accepts (50 MiB) loads in a 64 MB old space, its
// ~65 MB of segments outside the V8 heap (big-map.test.ts). Source lines are found by offset
// instead of split into strings. Lookups follow trace-mapping's `originalPositionFor` exactly
// (greatest lower bound; on an exact hit, the first segment of that column), and the tests
// compare the two on real and random maps.
import { TraceMap } from '@jridgewell/trace-mapping';
import { debugIdOf } from './debug-ids.ts';
import { decodeMappings, fromDecoded } from './mappings.ts';
import type { MinifiedIndex, Scope } from './scope-types.ts';
import { functionScopes } from './scopes.ts';

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

interface RawMap {
  sources?: unknown;
  sourceRoot?: string;
  sourcesContent?: unknown;
  names?: unknown;
  mappings?: unknown;
}

export class CompactMap {
  private readonly sources: string[];
  /** A source name's first index (what `sourceContentFor` answers for); looked up once per frame. */
  private readonly sourceIndex = new Map<string, number>();
  private readonly contents: (string | null)[];
  private readonly names: (string | null)[];
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
  /** The debug id the map declares, read from the one parse an upload's check makes. */
  readonly debugId: string | null;

  constructor(json: string) {
    const map = JSON.parse(json) as RawMap;
    this.debugId = debugIdOf(map);
    // What TraceMap accepted (it was the parser here before): `sources` an array, `mappings` a VLQ
    // string or already decoded arrays. An indexed map (`sections`) it refused, and so does this.
    if (!Array.isArray(map.sources)) throw new Error('source map has no sources');
    const columns =
      typeof map.mappings === 'string'
        ? decodeMappings(map.mappings)
        : Array.isArray(map.mappings)
          ? fromDecoded(map.mappings)
          : undefined;
    if (!columns) throw new Error('source map has no mappings');
    ({
      lineStart: this.lineStart,
      genColumn: this.genColumn,
      source: this.source,
      srcLine: this.srcLine,
      srcColumn: this.srcColumn,
      name: this.name,
    } = columns);
    // Source names resolve against `sourceRoot` exactly as trace-mapping resolves them: it does it
    // here, on a copy of the map without its mappings, so it decodes nothing.
    const resolved = new TraceMap({
      version: 3,
      sources: map.sources,
      sourceRoot: map.sourceRoot,
      names: [],
      mappings: '',
    }).resolvedSources;
    this.sources = resolved.map((s) => s ?? '');
    this.sources.forEach((s, i) => {
      if (!this.sourceIndex.has(s)) this.sourceIndex.set(s, i);
    });
    const contents = Array.isArray(map.sourcesContent) ? map.sourcesContent : [];
    // sourceContentFor's rule: a source's content is that of the first source resolving to its name.
    this.contents = this.sources.map((s) => {
      const text = contents[this.sourceIndex.get(s)!];
      return typeof text === 'string' ? text : null;
    });
    this.names = Array.isArray(map.names) ? map.names.map((n) => (typeof n === 'string' ? n : null)) : [];
    // Typed arrays (their real byte length: a mangled map may leave slack), strings (one byte a
    // character unless they need two), and for each source text half its size again for line
    // offsets and scopes, computed on first use (measured: 0.2× for offsets, up to 0.5× for scopes
    // on a file of many small functions).
    const wide = (x: string) => {
      for (let i = 0; i < x.length; i++) if (x.charCodeAt(i) > 0xff) return true;
      return false;
    };
    const strings = (xs: readonly (string | null)[], extra = 1) =>
      xs.reduce((a, x) => a + (x === null ? 8 : 40 + extra * x.length * (wide(x) ? 2 : 1)), 0);
    const arrays = Object.values(columns).reduce((a, x) => a + x.byteLength, 0);
    this.bytes = arrays + strings(this.sources) + strings(this.names) + strings(this.contents, 1.5);
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
    return {
      source: this.sources[src]!,
      line: this.srcLine[index]! + 1,
      column: this.srcColumn[index]!,
      name: name === -1 ? null : (this.names[name] ?? null),
    };
  }

  /** The name of a segment that starts exactly at a generated position (1-based line, 0-based column). */
  nameAt(line: number, column: number): string | null {
    const l = line - 1;
    if (l < 0 || l >= this.lineStart.length - 1) return null;
    let low = this.lineStart[l]!;
    let high = this.lineStart[l + 1]! - 1;
    while (low <= high) {
      const mid = low + ((high - low) >> 1);
      const cmp = this.genColumn[mid]! - column;
      if (cmp === 0) {
        const name = this.name[mid]!;
        return name === -1 ? null : (this.names[name] ?? null);
      }
      if (cmp < 0) low = mid + 1;
      else high = mid - 1;
    }
    return null;
  }

  /** Minified files indexed for this map (scope-naming.ts), by content hash; loaded by the worker. */
  readonly minified = new Map<string, Promise<MinifiedIndex | null>>();

  /** The original source's text, line offsets and function scopes (computed on first use), or null without `sourcesContent`. */
  original(source: string): OriginalSource | null {
    const i = this.sourceIndex.get(source);
    if (i === undefined) return null;
    let entry = this.originals.get(i);
    if (entry === undefined) {
      const text = this.contents[i] ?? null;
      if (text === null) {
        entry = null;
      } else {
        const starts = [0];
        for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) starts.push(at + 1);
        entry = { text, lineStarts: Int32Array.from(starts), scopes: functionScopes(text, source) };
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
