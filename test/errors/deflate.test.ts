// deflateMemory (errors/deflate.ts): smaller zlib state for small inputs, read back by any raw inflate.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { deflateMemory } from '../../src/domain/errors/deflate.ts';

describe('deflateMemory', () => {
  it('sizes the window to the input, within what raw deflate allows', () => {
    expect(deflateMemory(0)).toEqual({ windowBits: 9, memLevel: 2 });
    expect(deflateMemory(300)).toEqual({ windowBits: 9, memLevel: 2 });
    expect(deflateMemory(3257)).toEqual({ windowBits: 12, memLevel: 5 });
    expect(deflateMemory(32 * 1024)).toEqual({ windowBits: 15, memLevel: 8 });
    expect(deflateMemory(5 * 1024 * 1024)).toEqual({ windowBits: 15, memLevel: 8 });
  });

  it('deflates what a default raw inflate reads back, at any size', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 2000 }),
      fc.string({ unit: 'binary', maxLength: 2000 }),
      // Repetitive and large: matches reach as far back as the window lets them.
      fc
        .tuple(fc.string({ minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 3000 }))
        .map(([s, n]) => s.repeat(n)),
    );
    fc.assert(
      fc.property(text, (s) => {
        const input = Buffer.from(s);
        const packed = deflateRawSync(input, { level: 1, ...deflateMemory(input.length) });
        expect(inflateRawSync(packed).equals(input)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });
});
