// The work of finding where a multi-line header ends, counted rather than timed: every line is
// read as a frame line (frame-line.ts, itself linear in its line) a bounded number of times,
// whatever the message holds, with the hint and without it. A header found by rescanning from
// each candidate line, or a message matched against each line, would read lines quadratically.
import { describe, expect, it, vi } from 'vitest';

const work = { calls: 0, chars: 0 };
vi.mock('../../../src/domain/errors/pipeline/stack/frame-line.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/domain/errors/pipeline/stack/frame-line.ts')>();
  return {
    ...real,
    parseFrameLine: (line: string) => {
      work.calls++;
      work.chars += line.length;
      return real.parseFrameLine(line);
    },
  };
});
const { parseStackTrace, splitStack } = await import('../../../src/domain/errors/pipeline/stack/index.ts');

const frames = (n: number): string =>
  Array.from({ length: n }, (_, i) => `    at f${i} (/srv/a.js:${i + 1}:2)`).join('\n');
const messages: Record<string, (n: number) => string> = {
  braces: (n) => 'x {\n' + '  }\n{\n'.repeat(n),
  frameShaped: (n) => 'x\n' + '    at x (y:1:2)\nnot a frame\n'.repeat(n),
  atShaped: (n) => 'x\n' + 'fn@file:1:2\n\n'.repeat(n),
  inspected: (n) => 'x {\n' + "  code: 'E',\n  [cause]: Error: y\n      at g (/x.js:1:1)\n".repeat(n) + '}',
  blank: (n) => '\n'.repeat(3 * n),
};

function measure(text: string, hint?: { exception_type: string; message: string }): { calls: number; chars: number } {
  work.calls = 0;
  work.chars = 0;
  parseStackTrace(text, hint);
  splitStack(text, hint);
  return { ...work };
}

describe('finding a multi-line header', () => {
  it.each(Object.keys(messages))('%s: reads each line as a frame a bounded number of times', (name) => {
    for (const n of [100, 2000]) {
      const message = messages[name]!(n);
      const text = `Error: ${message}\n${frames(20)}\n}`;
      const lines = text.split('\n').length;
      for (const hint of [undefined, { exception_type: 'Error', message }]) {
        const w = measure(text, hint);
        expect(w.calls).toBeGreaterThanOrEqual(20);
        expect(w.calls).toBeLessThanOrEqual(8 * lines);
        expect(w.chars).toBeLessThanOrEqual(8 * text.length);
      }
    }
  });

  it('frame lines parsed grow with the stack, not with its square', () => {
    const small = measure(`Error: ${messages.braces!(500)}\n${frames(500)}`);
    const big = measure(`Error: ${messages.braces!(4000)}\n${frames(4000)}`);
    expect(big.calls / small.calls).toBeLessThan(10);
  });

  it.each([',', ' {'])(
    'a line ending in `%s` is read as a frame at most twice, however often it is looked at',
    (end) => {
      // Once as printed, once without what inspect appends: both readings are kept on the line.
      const text = `Error: x\n${Array.from({ length: 2000 }, (_, i) => `    at f${i} (/srv/a.js:${i + 1}:2)${end}`).join('\n')}`;
      for (const hint of [
        undefined,
        { exception_type: 'Error', message: 'x' },
        { exception_type: 'Error', message: 'y' },
      ]) {
        work.calls = 0;
        parseStackTrace(text, hint);
        expect(work.calls).toBeLessThanOrEqual(2 * 2001);
      }
    },
  );

  it('a blank line is never read as a frame', () => {
    const text = `Error: x\n${'\n'.repeat(5000)}    at f (/srv/a.js:1:2)`;
    for (const hint of [undefined, { exception_type: 'Error', message: 'x' }]) {
      work.calls = 0;
      parseStackTrace(text, hint);
      expect(work.calls).toBeLessThanOrEqual(10);
    }
  });
});
