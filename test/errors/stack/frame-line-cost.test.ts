// The work of reading one `name@location` line, counted rather than timed: a line may hold an `@`
// at every third character (64 KiB of them at the stack's size limit), and each `@` looked at costs
// a read of a location. At most a bounded number of `@`s are looked at, whatever the line holds, so
// a line costs time linear in its length; looking at every `@` was quadratic (a copy of the rest of
// the line for each).
import { describe, expect, it, vi } from 'vitest';

const work = { calls: 0 };
vi.mock('../../../src/domain/errors/pipeline/stack/location.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/domain/errors/pipeline/stack/location.ts')>();
  return {
    ...real,
    endsWithPosition: (text: string) => {
      work.calls++;
      return real.endsWithPosition(text);
    },
    parseLocation: (text: string) => {
      work.calls++;
      return real.parseLocation(text);
    },
  };
});
const { parseFrameLine } = await import('../../../src/domain/errors/pipeline/stack/frame-line.ts');
const { parseStackTrace } = await import('../../../src/domain/errors/pipeline/stack/index.ts');

const lines: Record<string, (n: number) => string> = {
  'digits after every @': (n) => 'x' + '@1a'.repeat(n) + ':1:2',
  'digits after every @, then `,`': (n) => 'x' + '@1a'.repeat(n) + ':1:2,',
  'digits after every @, then ` {`': (n) => 'x' + '@1a'.repeat(n) + ':1:2 {',
  'a scheme after every @': (n) => 'x' + '@a:'.repeat(n) + '1:2',
  'a path after every @': (n) => 'x' + '@/a'.repeat(n) + ' b',
  'bare names after every @': (n) => 'x' + '@a.js:1 '.repeat(n),
};

describe('reading a line with many `@`s', () => {
  it.each(Object.keys(lines))('%s: a bounded number of locations read per line', (name) => {
    for (const n of [100, 21_800]) {
      const line = lines[name]!(n);
      work.calls = 0;
      parseFrameLine(line);
      expect(work.calls).toBeLessThanOrEqual(64);
    }
  });

  it.each(Object.keys(lines))('%s: a whole stack of it reads each line a bounded number of times', (name) => {
    const count = (n: number): number => {
      work.calls = 0;
      const stack = `Error: x\n${lines[name]!(n)}\n    at f (/srv/a.js:1:2)`;
      parseStackTrace(stack);
      parseStackTrace(stack, { exception_type: 'Error', message: 'x' });
      return work.calls;
    };
    expect(count(21_800)).toBeLessThanOrEqual(4 * count(100));
  });
});
