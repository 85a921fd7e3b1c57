// W3C traceparent parsing (https://www.w3.org/TR/trace-context/#traceparent-header): golden cases
// from the spec's rules, and a property: no string a client sends throws, and anything accepted is
// two lowercase, non-zero hex ids.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTraceparent } from '../../src/http/trace-context.ts';

const traceId = '0af7651916cd43dd8448eb211c80319c';
const spanId = 'b7ad6b7169203331';

describe('parseTraceparent', () => {
  it.each([
    [`00-${traceId}-${spanId}-01`, { traceId, spanId }],
    [`00-${traceId}-${spanId}-00`, { traceId, spanId }],
    [`  00-${traceId}-${spanId}-01  `, { traceId, spanId }],
    // A later version may add fields after the flags; they are ignored.
    [`cc-${traceId}-${spanId}-09-what-the-future-holds`, { traceId, spanId }],
  ])('takes %s', (header, expected) => {
    expect(parseTraceparent(header)).toEqual(expected);
  });

  it.each([
    undefined,
    '',
    `00-${'0'.repeat(32)}-${spanId}-01`,
    `00-${traceId}-${'0'.repeat(16)}-01`,
    `ff-${traceId}-${spanId}-01`,
    `00-${traceId.toUpperCase()}-${spanId}-01`,
    `00-${traceId}-${spanId}-01-extra`,
    `00-${traceId.slice(1)}-${spanId}-01`,
    `00_${traceId}_${spanId}_01`,
    'not a traceparent',
  ])('refuses %s', (header) => {
    expect(parseTraceparent(header)).toBeUndefined();
  });

  it('never throws, and what it accepts is two non-zero lowercase hex ids', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.stringMatching(/^[0-9a-f-]{50,60}$/)),
        (header) => {
          const parsed = parseTraceparent(header);
          if (parsed) {
            expect(parsed.traceId).toMatch(/^(?!0+$)[0-9a-f]{32}$/);
            expect(parsed.spanId).toMatch(/^(?!0+$)[0-9a-f]{16}$/);
          }
        },
      ),
    );
  });
});
