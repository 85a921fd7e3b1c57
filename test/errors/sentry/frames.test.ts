// A Sentry frame's code context as the mapping keeps it (src/domain/errors/sentry/frames.ts):
// golden cases of the bounds (10 lines each side, the nearest kept; 240 characters a line, the cut
// marked), and through the pipeline: kept on a frame no map maps, scrubbed, and replaced by the
// map's context on a frame a map maps.
import { encode } from '@jridgewell/sourcemap-codec';
import { describe, expect, it } from 'vitest';
import { createPipelineCaches } from '../../../src/domain/errors/pipeline/caches.ts';
import { unpackBody } from '../../../src/domain/errors/pipeline/event-codec.ts';
import { processEvent } from '../../../src/domain/errors/pipeline/process.ts';
import type { MapRef } from '../../../src/domain/errors/pipeline/symbolicate.ts';
import { compilePolicy, defaultPolicy } from '../../../src/domain/errors/scrubbing/scrub.ts';
import { CompactMap } from '../../../src/domain/errors/source-maps/compact-map.ts';
import { fromSentryEvent } from '../../../src/domain/errors/sentry/event.ts';
import { sentryFrames } from '../../../src/domain/errors/sentry/frames.ts';

const lines = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i + 1}`);

describe('golden frames', () => {
  it('keeps the context as sent', () => {
    const frame = {
      filename: '/srv/app/orders.js',
      function: 'loadOrder',
      lineno: 25,
      colno: 9,
      in_app: true,
      pre_context: ['function loadOrder(id) {', '  const db = connect();'],
      context_line: '  throw new Error(`order ${id} was not found`);',
      post_context: ['}', ''],
    };
    expect(sentryFrames({ frames: [frame] })).toEqual([
      {
        file: '/srv/app/orders.js',
        function: 'loadOrder',
        line: 25,
        column: 9,
        in_app: true,
        pre_context: frame.pre_context,
        context_line: frame.context_line,
        post_context: frame.post_context,
      },
    ]);
  });

  it('keeps the 10 lines nearest the frame each side, 240 characters of each, lines in place, nothing else', () => {
    const [frame] = sentryFrames({
      frames: [
        {
          lineno: 40,
          pre_context: lines(14, 'pre'),
          context_line: 'x'.repeat(300),
          post_context: ['after', null, 7, ...lines(12, 'post')],
        },
      ],
    });
    expect(frame).toEqual({
      line: 40,
      pre_context: lines(14, 'pre').slice(4),
      context_line: `${'x'.repeat(240)}…`,
      post_context: ['after', '', '', ...lines(7, 'post')],
    });
    // Nothing is kept of a context that is not one, and nothing is added to a frame without.
    expect(
      sentryFrames({ frames: [{ lineno: 3, pre_context: 'one line', context_line: 12, post_context: [] }] }),
    ).toEqual([{ line: 3 }]);
    expect(sentryFrames({ frames: [{ lineno: 3 }] })).toEqual([{ line: 3 }]);
  });
});

describe('through the pipeline', () => {
  const mapOf = (sources: object) =>
    new CompactMap(
      JSON.stringify({
        version: 3,
        sources: ['src/checkout.ts'],
        names: [],
        mappings: encode([[[0, 0, 2, 2]]]),
        ...sources,
      }),
    );
  const withSources = mapOf({
    sourcesContent: ['// checkout\nexport function applyCoupon(code) {\n  throw new CheckoutError(code);\n}\n'],
  });
  const ref: MapRef = {
    file: 'https://shop.example/app.min.js',
    file_path: '/app.min.js',
    sha256: 'a'.repeat(64),
    size_bytes: 1,
    object_key: 'k',
  };
  const process = async (frames: unknown[], map = withSources) =>
    unpackBody(
      (
        await processEvent(
          fromSentryEvent(
            { release: 'shop@1', exception: { values: [{ type: 'E', stacktrace: { frames } }] } },
            new Date(),
          ),
          {
            maps: [ref],
            load: () => Promise.resolve(map),
            policy: compilePolicy(defaultPolicy),
            caches: createPipelineCaches(),
          },
        )
      ).stored,
    ).stack_frames;

  it("keeps an unmapped frame's context, scrubbed, and gives a mapped frame its map's, or none", async () => {
    const [server, bundle] = await process([
      {
        filename: '/srv/app/orders.js',
        lineno: 25,
        pre_context: ["  const db = 'postgres://orders:hunter2@db.internal/orders';"],
        context_line: '  throw new Error(`no order`); // password=hunter2',
        post_context: ['}'],
      },
      {
        filename: 'https://shop.example/app.min.js',
        lineno: 1,
        colno: 3,
        pre_context: [],
        context_line: 'function a(o){throw new CheckoutError(o)}',
        post_context: ['//# sourceMappingURL=app.min.js.map'],
      },
    ]);
    expect(server).toMatchObject({
      unmapped_reason: 'no_map_for_file',
      pre_context: ["  const db = 'postgres://orders:[Filtered]@db.internal/orders';"],
      context_line: '  throw new Error(`no order`); // password=[Filtered]',
      post_context: ['}'],
    });
    expect(bundle).toMatchObject({
      file: 'src/checkout.ts',
      line: 3,
      pre_context: ['// checkout', 'export function applyCoupon(code) {'],
      context_line: '  throw new CheckoutError(code);',
      post_context: ['}', ''],
    });
    // A map without sources gives none: the SDK's context was the minified line's.
    const [bare] = await process(
      [{ filename: 'https://shop.example/app.min.js', lineno: 1, colno: 3, context_line: 'function a(o){throw o}' }],
      mapOf({}),
    );
    expect(bare).toMatchObject({ file: 'src/checkout.ts', line: 3 });
    expect(bare).not.toHaveProperty('context_line');
    expect(bare).not.toHaveProperty('pre_context');
  });
});
