// The packed source map (src/domain/errors/source-maps/compact-map.ts) against the library it stands in
// for: every lookup on a real esbuild map answers exactly what trace-mapping's originalPositionFor
// answers, and the map cache keeps its memory bound by what parsed maps really hold.
import { originalPositionFor, TraceMap, type SourceMapSegment } from '@jridgewell/trace-mapping';
import { build } from 'esbuild';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { CompactMap, lineOf } from '../../src/domain/errors/source-maps/compact-map.ts';
import { SourceMapCache } from '../../src/domain/errors/source-maps/cache.ts';

let json: string;

/** ECMA-426 VLQ, written here so that segments keep the order given (unsorted lines included). */
function encode(lines: SourceMapSegment[][]): string {
  const digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const vlq = (n: number) => {
    let v = n < 0 ? (-n << 1) | 1 : n << 1;
    let out = '';
    do {
      const d = v & 31;
      v >>>= 5;
      out += digits[v > 0 ? d | 32 : d];
    } while (v > 0);
    return out;
  };
  const last = [0, 0, 0, 0];
  return lines
    .map((line) => {
      let column = 0;
      return line
        .map((seg) => {
          let out = vlq(seg[0] - column);
          column = seg[0];
          for (let k = 1; k < seg.length; k++) {
            out += vlq(seg[k]! - last[k - 1]!);
            last[k - 1] = seg[k]!;
          }
          return out;
        })
        .join(',');
    })
    .join(';');
}
let lines: string[];

beforeAll(async () => {
  const fns = Array.from(
    { length: 300 },
    (_, i) =>
      `export function handler${i}(input: { id: number }): number {\n  const total = input.id * ${i};\n  if (total < 0) throw new RangeError('negative ${i}');\n  return total + helper${i}(input);\n}\nfunction helper${i}(x: { id: number }): number {\r\n  return x.id % ${i + 7};\n}\n`,
  ).join('\n');
  const out = await build({
    stdin: { contents: fns, sourcefile: 'src/handlers.ts', loader: 'ts' },
    bundle: true,
    minify: true,
    sourcemap: 'external',
    sourcesContent: true,
    write: false,
    outfile: 'dist/main.js',
    format: 'esm',
    logLevel: 'silent',
    lineLimit: 400,
  });
  json = out.outputFiles.find((f) => f.path.endsWith('.map'))!.text;
  lines = out.outputFiles.find((f) => f.path.endsWith('.js'))!.text.split('\n');
});

describe('CompactMap', () => {
  it('answers every lookup as trace-mapping does', () => {
    const compact = new CompactMap(json);
    const reference = new TraceMap(json);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: lines.length + 2 }), fc.integer({ min: 0, max: 500 }), (line, column) => {
        const expected = originalPositionFor(reference, { line, column });
        const got = compact.originalPositionFor(line, column);
        expect(got).toEqual(expected.source === null ? null : expected);
      }),
      { numRuns: 5000 },
    );
  });

  it('decodes any mappings as trace-mapping does, unsorted lines included', () => {
    const segment = fc.oneof(
      fc.tuple(fc.nat(300)).map((s): SourceMapSegment => s),
      fc.tuple(fc.nat(300), fc.nat(2), fc.nat(50), fc.nat(80)).map((s): SourceMapSegment => s),
      fc.tuple(fc.nat(300), fc.nat(2), fc.nat(50), fc.nat(80), fc.nat(3)).map((s): SourceMapSegment => s),
    );
    fc.assert(
      fc.property(
        fc.array(fc.array(segment, { maxLength: 8 }), { maxLength: 6 }),
        fc.array(fc.tuple(fc.integer({ min: 1, max: 8 }), fc.nat(320)), { minLength: 1, maxLength: 20 }),
        (lines, needles) => {
          const mappings = encode(lines);
          const raw = JSON.stringify({
            version: 3,
            sources: ['a.ts', 'b.ts', 'c.ts'],
            names: ['x', 'y', 'z', 'w'],
            mappings,
          });
          const compact = new CompactMap(raw);
          const reference = new TraceMap(raw);
          for (const [line, column] of needles) {
            const expected = originalPositionFor(reference, { line, column });
            expect(compact.originalPositionFor(line, column)).toEqual(expected.source === null ? null : expected);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses what trace-mapping refused: no sources, no mappings, an indexed map', () => {
    expect(() => new CompactMap('{"version":3,"mappings":"AAAA"}')).toThrow();
    expect(() => new CompactMap('{"version":3,"sources":[]}')).toThrow();
    expect(() => new CompactMap('{"version":3,"sections":[]}')).toThrow();
  });

  it('reads original lines without their line breaks', () => {
    const compact = new CompactMap(json);
    const source = compact.original('src/handlers.ts')!;
    expect(lineOf(source, 0)).toBe('export function handler0(input: { id: number }): number {');
    expect(lineOf(source, 5)).toBe('function helper0(x: { id: number }): number {');
    expect(lineOf(source, source.lineStarts.length)).toBeUndefined();
    expect(compact.original('src/elsewhere.ts')).toBeNull();
  });

  it('holds a few times less than trace-mapping would, and says how much', () => {
    const compact = new CompactMap(json);
    compact.original('src/handlers.ts');
    expect(compact.bytes).toBeGreaterThan(json.length);
    expect(compact.bytes).toBeLessThan(3 * json.length);
  });
});

describe('SourceMapCache', () => {
  it('evicts the least recently used maps once what they hold passes the bound', async () => {
    const one = new CompactMap(json).bytes;
    const cache = new SourceMapCache(Math.floor(one * 2.5));
    const loads: string[] = [];
    const get = (key: string) =>
      cache.get(key, json.length, async () => {
        loads.push(key);
        return json;
      });
    await get('a');
    await get('b');
    await get('a');
    await get('c'); // three do not fit: b, the least recently used, goes
    expect(cache.usedBytes).toBeLessThanOrEqual(cache.maxCost);
    await get('a');
    await get('b');
    expect(loads).toEqual(['a', 'b', 'c', 'b']);
  });

  it('keeps one map bigger than the whole bound beside it, instead of reloading it per frame', async () => {
    const one = new CompactMap(json).bytes;
    let now = 0;
    const cache = new SourceMapCache(Math.floor(one / 2), 5000, () => now, 60_000);
    const small = '{"version":3,"sources":["s.ts"],"names":[],"mappings":"AAAA"}';
    const loads: string[] = [];
    const get = (key: string, text: string) =>
      cache.get(key, text.length, async () => {
        loads.push(key);
        return text;
      });
    await get('big', json);
    await get('s1', small);
    await get('big', json);
    await get('s2', small);
    expect(await get('big', json)).toBeInstanceOf(CompactMap);
    expect(loads).toEqual(['big', 's1', 's2']);
    expect(cache.largeBytes).toBe(one);
    expect(cache.usedBytes).toBeLessThanOrEqual(cache.maxCost);
    now += 60_001; // unused for a minute: its memory goes back
    await get('s1', small);
    expect(cache.largeBytes).toBe(0);
  });

  it('answers a failed load at once for a while, then tries again', async () => {
    let now = 0;
    const cache = new SourceMapCache(1e9, 5000, () => now);
    let calls = 0;
    const failing = () =>
      cache.get('x', 10, async () => {
        calls += 1;
        throw new Error('store down');
      });
    await expect(failing()).rejects.toThrow('store down');
    await expect(failing()).rejects.toThrow('store down');
    expect(calls).toBe(1);
    now += 5000;
    await expect(failing()).rejects.toThrow('store down');
    expect(calls).toBe(2);
  });
});
