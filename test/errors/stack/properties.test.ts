// Properties of the stack parser over generated input (fast-check): it never throws, never loops,
// keeps every non-blank line it does not read, agrees with splitStack, and its work grows
// linearly with the stack (hostile lines built to make a backtracking pattern go quadratic cost
// about what ordinary frames of the same size cost).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseStackBody, parseStackTrace, splitStack } from '../../../src/domain/errors/pipeline/stack/index.ts';

// Pieces of every format, so that generated lines come close to real ones and to their edges.
const piece = fc.constantFrom(
  '    at ',
  'at ',
  'async ',
  'new ',
  ' (',
  ')',
  '(',
  ' [as x]',
  'eval at ',
  ', ',
  '<anonymous>',
  'native',
  'index 0',
  'address at ',
  'wasm://wasm/ab:wasm-function[1]:0x1f',
  '@',
  '[native code]',
  ' line 3 > eval',
  ' > Function',
  '*',
  '/<',
  ':1',
  ':12:7',
  ':',
  'https://x.io/a.js',
  '/srv/a b/(c).js',
  'C:\\x\\a.js',
  'webpack-internal:///./s.js',
  'data:,x',
  ' {',
  '}',
  '  [cause]: ',
  'Error: m',
  '  [errors]: [',
  '  ]',
  ',',
  '\n',
  '\r\n',
  '    ... 2 lines matching cause stack trace ...',
  'Node.js v24.0.0',
  '^',
  '\u0000',
  '\uD800',
  '\u2028',
  'é',
  ' ',
  '    ',
);
const stack = fc.oneof(
  fc.array(piece, { maxLength: 200 }).map((p) => p.join('')),
  fc.string({ unit: 'binary', maxLength: 2000 }),
);

describe('stack parser properties', () => {
  it('never throws, and frames carry only positive integer positions', () => {
    fc.assert(
      fc.property(stack, (text) => {
        const parsed = parseStackTrace(text);
        for (const f of [...parsed.frames, ...parsed.linked.flatMap((l) => l.frames)]) {
          for (const n of [f.line, f.column]) if (n !== undefined) expect(Number.isSafeInteger(n) && n > 0).toBe(true);
          expect(f.file === undefined || f.file.length > 0).toBe(true);
        }
        expect(parsed.unparsed_lines.length).toBeLessThanOrEqual(parsed.unparsed_line_count);
      }),
      { numRuns: 3000 },
    );
  });

  it('parses the frame lines alone as it parses the whole stack, and the two halves join back', () => {
    fc.assert(
      fc.property(stack, (text) => {
        const { message, frames } = splitStack(text);
        expect(message + frames).toBe(text);
        expect(parseStackBody(frames)).toEqual(parseStackTrace(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps every line after the first frame when the message is known: a frame, a known decoration, or an unparsed line', () => {
    const line = fc.oneof(
      fc.constantFrom('    at f (/a.js:1:2)', 'g@https://x.io/a.js:3:4'),
      fc.string({ maxLength: 40 }).filter((s) => !s.includes('\n') && !s.includes('\r')),
    );
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 30 }), (lines) => {
        const text = ['Error: m', '    at first (/a.js:1:1)', ...lines].join('\n');
        const parsed = parseStackTrace(text, { exception_type: 'Error', message: 'm' });
        const blank = lines.filter((l) => l.trim() === '').length;
        // Properties (` {` … `}`) end the stack; without them, every line is accounted for.
        fc.pre(!text.includes(' {') && !text.includes('...') && !text.includes('Node.js v'));
        expect(parsed.frames.length + parsed.unparsed_line_count + blank).toBe(lines.length + 1);
        // Without the message, the lines before the last run of frames may be message: every line
        // of the body is still accounted for, and the last frame is never lost.
        const body = splitStack(text).frames.split('\n');
        const bare = parseStackTrace(text);
        expect(bare.frames.length + bare.unparsed_line_count + body.filter((l) => l.trim() === '').length).toBe(
          body.length,
        );
        expect(bare.frames.length).toBeGreaterThan(0);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('stack parser cost', () => {
  // Work, not time, is what this bounds, by ratios within one process so that machine speed cancels
  // out: a stack eight times the size costs about eight times as much (a backtracking pattern goes
  // quadratic on these lines: 64 times), and a hostile stack costs about what ordinary frames of
  // the same size do.
  const size = 64 * 1024;
  const ordinary = (n: number) =>
    Array.from({ length: n / 32 }, (_, i) => `    at f${i} (/srv/app/a.js:${i + 1}:9)`)
      .join('\n')
      .slice(0, n);
  const hostile: Record<string, (n: number) => string> = {
    ordinary,
    parens: (n) => `    at ${' ('.repeat(n / 2)}`,
    parensClosed: (n) => `    at f ${'('.repeat(n / 2 - 8)})`,
    evalChain: (n) => `    at eval (${'eval at f ('.repeat(n / 12)}`,
    ats: (n) => `${'@'.repeat(n - 8)}:1`,
    atsLocations: (n) => 'a@b'.repeat(n / 3),
    colons: (n) => `    at f (${':1'.repeat(n / 2 - 8)}x)`,
    geckoEval: (n) => `f@x${' line 1 >'.repeat(n / 9)}`,
    braces: (n) => `Error: x\n    at f (/a.js:1:2) {\n${'  [cause]: Error: y\n'.repeat(n / 20)}`,
    causeFrames: (n) =>
      `Error: x\n    at f (/a.js:1:2) {\n  [cause]: Error: y\n${'      at g (/a.js:1:2)\n'.repeat(n / 24)}}`,
    manyLines: (n) => '\n'.repeat(n),
  };

  // The CPU time of this thread, not the wall clock: what other processes take of the machine is no
  // work of the parser's. The kernel accounts it a scheduler tick at a time (up to 4 ms late), so a
  // text is parsed over and over until 50 ms of it add up, and the cost is the time per parse.
  const cpu = (): number => {
    const used = process.threadCpuUsage();
    return used.user + used.system;
  };
  const cost = (text: string): number => {
    const started = cpu();
    let parses = 0;
    do {
      parseStackTrace(text);
      parses++;
    } while (cpu() - started < 50_000);
    return (cpu() - started) / parses;
  };

  it.each(Object.keys(hostile))('%s: 64 KiB costs about 8 times 8 KiB, and about what ordinary frames do', (name) => {
    const make = hostile[name]!;
    const big = make(size);
    expect(Buffer.byteLength(big)).toBeLessThanOrEqual(size + 64);
    cost(big); // warm up
    const [ofBig, ofEighth, ofOrdinary] = [cost(big), cost(make(size / 8)), cost(ordinary(size))];
    expect(ofBig / ofEighth).toBeLessThan(24);
    if (name !== 'manyLines') expect(ofBig / ofOrdinary).toBeLessThan(10);
  });
});
