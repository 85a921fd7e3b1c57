// The golden corpus: real stacks captured from real engines on this machine (Node 24, Chromium,
// Firefox ESR, Deno, Bun, JavaScriptCore, Hermes; test/errors/corpus/capture/ makes them)
// and the published fixture suites of established parsers (fixtures/corpus/PUBLISHED.md), each
// with its expected frames derived apart from this parser. Every case must parse exactly.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseStackTrace, type ParsedFrame } from '../../../src/domain/errors/pipeline/stack/index.ts';

type ExpectedFrame = ParsedFrame;
interface Case {
  id: string;
  engine: 'v8' | 'spidermonkey' | 'jsc' | 'hermes';
  stack: string;
  /** The error's own type and message, as a capture carries them beside its stack. */
  exception_type?: string;
  message?: string;
  frame_count: number;
  innermost?: ExpectedFrame;
  outermost?: ExpectedFrame;
  frames?: ExpectedFrame[];
  linked?: { source: string; exception_type: string; message?: string; frame_count?: number }[];
  unparsed_lines?: number;
  note?: string;
}
interface CorpusFile {
  origin: string;
  licence?: string;
  cases: Case[];
}

const dir = new URL('../fixtures/corpus/', import.meta.url);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .sort();
const corpus = files.map((f) => ({ name: f, ...(JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as CorpusFile) }));

/** The frame fields a case states: eval_origin only where the case gives it. */
function comparable(actual: ParsedFrame | undefined, expected: ExpectedFrame): ParsedFrame | undefined {
  if (!actual) return actual;
  const out: ParsedFrame = {};
  for (const k of ['function', 'file', 'line', 'column'] as const)
    if (actual[k] !== undefined) (out as Record<string, unknown>)[k] = actual[k];
  if (expected.eval_origin !== undefined && actual.eval_origin !== undefined) out.eval_origin = actual.eval_origin;
  return out;
}

describe('stack corpus', () => {
  it('holds at least 200 stacks captured here, from several engines, and the published suites', () => {
    const captured = corpus.filter((c) => c.name.startsWith('captured-')).flatMap((c) => c.cases);
    expect(captured.length).toBeGreaterThanOrEqual(200);
    expect(new Set(captured.map((c) => c.engine)).size).toBeGreaterThanOrEqual(3);
    expect(corpus.filter((c) => c.name.startsWith('published-')).flatMap((c) => c.cases).length).toBeGreaterThan(0);
    const ids = corpus.flatMap((c) => c.cases.map((k) => k.id));
    expect(new Set(ids).size).toBe(ids.length);
  });

  for (const file of corpus) {
    describe(`${file.name}: ${file.origin}`, () => {
      it.each(file.cases.map((c) => [c.id, c] as const))('%s', (_id, c) => {
        const parsed = parseStackTrace(
          c.stack,
          c.exception_type === undefined ? undefined : { exception_type: c.exception_type, message: c.message },
        );
        const frames = parsed.frames;
        expect(frames.length, 'frame count').toBe(c.frame_count);
        if (c.frames) expect(frames.map((f, i) => comparable(f, c.frames![i]!))).toEqual(c.frames);
        if (c.innermost) expect(comparable(frames.at(-1), c.innermost), 'innermost').toEqual(c.innermost);
        if (c.outermost) expect(comparable(frames[0], c.outermost), 'outermost').toEqual(c.outermost);
        if (c.linked) {
          expect(
            parsed.linked.map((l) => ({
              source: l.source,
              exception_type: l.exception_type,
              message: l.message,
              frame_count: l.frames.length,
            })),
          ).toEqual(
            c.linked.map((l) => ({
              source: l.source,
              exception_type: l.exception_type,
              message: l.message,
              frame_count: l.frame_count ?? expect.any(Number),
            })),
          );
        }
        expect(parsed.unparsed_line_count, 'unparsed lines').toBe(c.unparsed_lines ?? 0);
      });
    });
  }
});
