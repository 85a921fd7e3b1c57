// `storableJson` (intake/captured-event.ts) writes exactly what `storable` makes, whether the fast
// path (no character Postgres cannot store) or the walk is taken.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { storable, storableJson } from '../../src/domain/errors/intake/captured-event.ts';

const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 12 }),
  fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udc00y', '\udfff\ud800', '\ud83d\ude00', '\\u0000', '\\ud800'),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 4 }),
    fc.dictionary(text, tie('v'), { maxKeys: 4 }),
  ),
})).v;

describe('storableJson', () => {
  it('is the JSON of storable, for any value', () => {
    fc.assert(
      fc.property(value, (v) => {
        const json = storableJson(v);
        expect(json).toBe(JSON.stringify(storable(v)));
        const bad: string[] = [];
        JSON.parse(json, (k, v: unknown) => {
          for (const t of [k, v]) if (typeof t === 'string' && (!t.isWellFormed() || t.includes('\0'))) bad.push(t);
          return v;
        });
        expect(bad).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps well-formed text as it is, emoji included', () => {
    expect(storableJson({ m: 'ok 😀 \\u0000 text' })).toBe(JSON.stringify({ m: 'ok 😀 \\u0000 text' }));
    expect(storableJson({ m: 'a\u0000b', ['k\ud800']: 1 })).toBe('{"m":"a\uFFFDb","k\uFFFD":1}');
  });
});
