// Processing keeps whole stacks per scrubbing policy in the worker's StackCache (process.ts,
// stack-cache.ts) and stores a body as three segments of one deflate stream (event-codec.ts). What these tests hold it to: an event processed
// with everything remembered is stored byte for byte as when nothing was, scrub counts included;
// what one policy remembered never serves another; a frame whose map could not be read is not
// remembered; and any three segments inflate to the whole body (stored blocks over 64 KiB too).
import { inflateRawSync } from 'node:zlib';
import { transform } from 'esbuild';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createPipelineCaches } from '../../src/domain/errors/pipeline/caches.ts';
import { packBody, StackEncoder, unpackBody } from '../../src/domain/errors/pipeline/event-codec.ts';
import { errorEventInput } from '../../src/contract/error-capture.ts';
import { filePath } from '../../src/domain/errors/pipeline/paths.ts';
import { processEvent } from '../../src/domain/errors/pipeline/process.ts';
import { defaultPolicy } from '../../src/domain/errors/scrubbing/scrub.ts';
import { parseMap } from '../../src/domain/errors/source-maps/cache.ts';
import type { MapLoader, MapRef } from '../../src/domain/errors/pipeline/symbolicate.ts';

const source = [
  '// Support: jane.doe@example.com',
  'export function checkout(cart: { total: number }): number {',
  "  const url = 'https://admin:hunter2@db.internal.example.com/shop';",
  '  if (cart.total < 0) {',
  "    throw new RangeError('negative total at ' + url);",
  '  }',
  '  return cart.total;',
  '}',
].join('\n');

const file = 'https://shop.example.com/assets/checkout.js';

async function fixture() {
  const out = await transform(source, {
    loader: 'ts',
    minify: true,
    sourcemap: 'external',
    sourcefile: 'src/checkout.ts',
    format: 'esm',
  });
  const map = JSON.parse(out.map) as { sourcesContent?: string[] };
  map.sourcesContent = [source];
  const column = out.code.indexOf('throw') + 1;
  const json = JSON.stringify(map);
  const ref: MapRef = {
    file,
    file_path: filePath(file),
    sha256: `memo-${json.length}`,
    size_bytes: json.length,
    object_key: 'k',
  };
  const parsed = parseMap(json);
  const load: MapLoader = async () => parsed;
  const event = errorEventInput.parse({
    event_time: '2026-11-21T12:00:00Z',
    exception_type: 'RangeError',
    message: 'negative total',
    release: 'r1',
    stack: ['RangeError: negative total', `    at a (${file}:1:${column})`, `    at b (${file}:1:${column})`].join(
      '\n',
    ),
  });
  return { ref, load, event };
}

// One worker's caches for the whole file: each test's policy is its own, so nothing is kept for it yet.
const caches = createPipelineCaches();

const inflate = (b: Buffer) => JSON.parse(inflateRawSync(b).toString('utf8')) as Record<string, unknown>;

describe('remembered stacks', () => {
  it('store an event byte for byte as processing it afresh does, scrub counts included', async () => {
    const { ref, load, event } = await fixture();
    // A policy object of its own, so that nothing is remembered yet.
    const policy = caches.policies.get({ ...defaultPolicy, sensitive_keys: ['memo-test-1'] });
    const cold = await processEvent(event, { maps: [ref], load, policy, caches });
    const warm = await processEvent(event, { maps: [ref], load, policy, caches });
    expect(warm.stored.equals(cold.stored)).toBe(true);
    const body = inflate(warm.stored);
    const frames = body.stack_frames as { context_line?: string; pre_context?: string[]; function?: string }[];
    expect(frames).toHaveLength(2);
    expect(frames[0]!.function).toBe('checkout');
    expect(frames[0]!.pre_context!.join('\n')).toContain('[Filtered]@db.internal.example.com');
    expect(JSON.stringify(body)).not.toContain('hunter2');
    expect(JSON.stringify(body)).not.toContain('jane.doe@example.com');
    // Two frames, each with the URL's password in its context: counted in both events alike.
    expect(body.scrub_counts).toMatchObject({ url_password: 2 });
    expect(unpackBody(warm.stored)).toEqual(body);
  });

  it('never serve another policy', async () => {
    const { ref, load, event } = await fixture();
    const strict = caches.policies.get({ ...defaultPolicy, sensitive_keys: ['memo-test-2'] });
    const lax = caches.policies.get({ ...defaultPolicy, disabled_rules: ['url_password', 'email'] });
    await processEvent(event, { maps: [ref], load, policy: strict, caches });
    const body = inflate((await processEvent(event, { maps: [ref], load, policy: lax, caches })).stored);
    expect(JSON.stringify(body)).toContain('hunter2');
    expect(body.scrub_counts).not.toHaveProperty('url_password');
  });

  it('leave out a frame whose map could not be read, so a later attempt maps it', async () => {
    const { ref, load, event } = await fixture();
    const policy = caches.policies.get({ ...defaultPolicy, sensitive_keys: ['memo-test-3'] });
    const down: MapLoader = () => Promise.reject(new Error('connect ECONNREFUSED'));
    const failed = await processEvent(event, { maps: [ref], load: down, policy: policy, caches });
    expect(failed.frames.map((f) => f.unmapped_reason)).toEqual(['map_unavailable', 'map_unavailable']);
    const later = await processEvent(event, { maps: [ref], load, policy, caches });
    expect(later.frames.map((f) => f.unmapped_reason)).toEqual([undefined, undefined]);
    expect(later.frames[0]!.function).toBe('checkout');
  });
});

describe('a remembered stack', () => {
  it('keeps each event its own message lines, scrubbed, while the frame lines come from the memo', async () => {
    const { ref, load, event } = await fixture();
    const policy = caches.policies.get({ ...defaultPolicy, sensitive_keys: ['memo-test-4'] });
    const frameLines = event.stack!.slice(event.stack!.indexOf('\n') + 1);
    const first = inflate(
      (
        await processEvent(
          { ...event, stack: `RangeError: for jane@example.com\n${frameLines}` },
          { maps: [ref], load, policy, caches },
        )
      ).stored,
    );
    const second = inflate(
      (
        await processEvent(
          { ...event, stack: `RangeError: for 10.1.2.3 and me\n${frameLines}` },
          { maps: [ref], load, policy, caches },
        )
      ).stored,
    );
    expect(first.stack).toBe(`RangeError: for [Filtered]\n${frameLines}`);
    expect(second.stack).toBe(`RangeError: for [Filtered] and me\n${frameLines}`);
    expect(first.scrub_counts).toMatchObject({ email: 1, url_password: 2 });
    expect(second.scrub_counts).toMatchObject({ ipv4: 1, url_password: 2 });
    expect(second.scrub_counts).not.toHaveProperty('email');
    expect(second.stack_frames).toEqual(first.stack_frames);
    // Given frames with a stack beside them: the stack text is the event's own, not a remembered one.
    const given = [{ function: 'x', file, line: 1, column: 5 }];
    const a = inflate(
      (
        await processEvent(
          { ...event, stack_frames: given, stack: 'A\n    at x (a.js:1:1)' },
          { maps: [ref], load, policy, caches },
        )
      ).stored,
    );
    const b = inflate(
      (
        await processEvent(
          { ...event, stack_frames: given, stack: 'B\n    at y (b.js:2:2)' },
          { maps: [ref], load, policy, caches },
        )
      ).stored,
    );
    expect([a.stack, b.stack]).toEqual(['A\n    at x (a.js:1:1)', 'B\n    at y (b.js:2:2)']);
  });
});

describe('a stored body in three segments', () => {
  it('inflates to the stack text, the frames and the head, whatever they hold', () => {
    const json = fc.jsonValue().map((v) => JSON.stringify(v));
    const head = fc.dictionary(
      fc.string().filter((k) => !['stack_frames', 'stack'].includes(k)),
      fc.jsonValue(),
    );
    const text = fc.option(
      fc.tuple(fc.string({ unit: 'binary', maxLength: 70_000 }), fc.string({ unit: 'binary', maxLength: 300 })),
      { nil: undefined },
    );
    fc.assert(
      fc.property(fc.array(json, { maxLength: 40 }), head, fc.string(), text, (frameJsons, rest, time, stack) => {
        const h = { event_time: time, ...rest } as never;
        const body = inflate(packBody(new StackEncoder().framesSegment(frameJsons, stack?.[1]), stack?.[0], h));
        const expected = {
          stack_frames: frameJsons.map((j) => JSON.parse(j) as unknown),
          ...(h as object),
          ...(stack ? { stack: stack[0] + stack[1] } : {}),
        };
        expect(body).toEqual(JSON.parse(JSON.stringify(expected)));
      }),
      { numRuns: 100 },
    );
  });
});
