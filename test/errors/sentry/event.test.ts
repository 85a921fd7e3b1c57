// Sentry events as captures (src/domain/errors/sentry/event.ts): golden cases in the shapes
// the JavaScript, Python and browser SDKs send, and the property that any JSON object maps to a
// capture that capture's own schema accepts (Sentry's rule: normalise, never refuse a value); and
// causes, processed, hang on their parents as the SDK linked them.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorEventInput } from '../../../src/contract/error-capture.ts';
import { createPipelineCaches } from '../../../src/domain/errors/pipeline/caches.ts';
import { unpackBody } from '../../../src/domain/errors/pipeline/event-codec.ts';
import { processEvent } from '../../../src/domain/errors/pipeline/process.ts';
import type { MapRef } from '../../../src/domain/errors/pipeline/symbolicate.ts';
import { compilePolicy, defaultPolicy } from '../../../src/domain/errors/scrubbing/scrub.ts';
import { cutBreadcrumbData, fromSentryEvent, sentryLabel } from '../../../src/domain/errors/sentry/event.ts';

const now = new Date('2026-11-26T10:00:00.000Z');

describe('golden events', () => {
  it('maps a browser error with causes, breadcrumbs, request, user, tags and debug ids', () => {
    const event = {
      event_id: '9EC79C33-EC99-42AB-8353-589FCB2E04DC',
      timestamp: 1795687200.5,
      platform: 'javascript',
      level: 'error',
      release: 'shop web 2.4.1/rc',
      environment: 'production',
      tags: [
        ['browser', 'Chrome 131'],
        ['a key with spaces and far too many characters to keep', 'v'],
      ],
      user: { id: '42', email: 'ann@example.com', ip_address: '203.0.113.9' },
      request: {
        url: 'https://shop.example/cart?token=abc',
        method: 'GET',
        headers: [
          ['User-Agent', 'Mozilla/5.0'],
          ['Authorization', 'Bearer xyz'],
        ],
      },
      contexts: {
        trace: { trace_id: 'b3e2c59eb7f848bd93aaab1ea97b0952', span_id: '851ba26bb5543c13', op: 'pageload' },
      },
      breadcrumbs: {
        values: [
          { timestamp: 1795687199, category: 'ui.click', level: 'log', message: 'button#buy', data: { x: { y: 1 } } },
        ],
      },
      fingerprint: ['checkout', 'payment'],
      exception: {
        values: [
          {
            type: 'NetworkError',
            value: 'fetch failed',
            stacktrace: { frames: [{ filename: 'https://shop.example/assets/vendor.js', lineno: 1, colno: 99 }] },
            mechanism: { type: 'chained', exception_id: 1, parent_id: 0 },
          },
          {
            type: 'CheckoutError',
            value: 'could not place the order',
            stacktrace: {
              frames: [
                {
                  abs_path: 'https://shop.example/assets/app.min.js',
                  function: 'main',
                  lineno: 1,
                  colno: 10,
                  in_app: true,
                },
                {
                  abs_path: 'https://shop.example/assets/app.min.js',
                  function: 'buy',
                  lineno: 1,
                  colno: 532,
                  in_app: true,
                },
              ],
            },
            mechanism: { type: 'onerror', handled: false, exception_id: 0 },
          },
        ],
      },
      debug_meta: {
        images: [
          {
            type: 'sourcemap',
            code_file: 'https://shop.example/assets/app.min.js',
            debug_id: 'C0FFEE00-1234-4abc-8def-0123456789AB',
          },
          { type: 'macho', code_file: 'x', debug_id: 'y' },
        ],
      },
      sdk: { name: 'sentry.javascript.browser', version: '11.12.0', integrations: ['x'] },
    };
    expect(fromSentryEvent(event, now)).toEqual({
      event_id: '9ec79c33ec9942ab8353589fcb2e04dc',
      event_time: '2026-11-26T10:00:00.500Z',
      exception_type: 'CheckoutError',
      message: 'could not place the order',
      stack_frames: [
        { function: 'main', file: 'https://shop.example/assets/app.min.js', line: 1, column: 10, in_app: true },
        { function: 'buy', file: 'https://shop.example/assets/app.min.js', line: 1, column: 532, in_app: true },
      ],
      release: 'shop-web-2.4.1-rc',
      tags: { environment: 'production', browser: 'Chrome 131', a_key_with_spaces_and_far_too_ma: 'v' },
      breadcrumbs: [
        {
          timestamp: '2026-11-26T09:59:59.000Z',
          category: 'ui.click',
          level: 'info',
          message: 'button#buy',
          data: { x: '{"y":1}' },
        },
      ],
      fingerprint: 'checkout\npayment',
      trace_id: 'b3e2c59eb7f848bd93aaab1ea97b0952',
      span_id: '851ba26bb5543c13',
      // The cause hangs on the outer exception (its parent_id is the outer's exception_id).
      linked_exceptions: [
        {
          source: 'cause',
          exception_type: 'NetworkError',
          message: 'fetch failed',
          stack_frames: [{ file: 'https://shop.example/assets/vendor.js', line: 1, column: 99 }],
        },
      ],
      sentry: {
        level: 'error',
        platform: 'javascript',
        environment: 'production',
        user: { id: '42', email: 'ann@example.com', ip_address: '203.0.113.9' },
        request: {
          url: 'https://shop.example/cart?token=abc',
          method: 'GET',
          headers: { 'User-Agent': 'Mozilla/5.0', Authorization: 'Bearer xyz' },
        },
        contexts: event.contexts,
        sdk: { name: 'sentry.javascript.browser', version: '11.12.0' },
        debug_ids: { 'https://shop.example/assets/app.min.js': 'c0ffee00-1234-4abc-8def-0123456789ab' },
      },
    });
  });

  it('maps captureMessage, with or without the synthetic stack Node attaches', () => {
    const plain = fromSentryEvent({ message: 'disk almost full', level: 'warning' }, now, 'a'.repeat(32));
    expect(plain).toMatchObject({
      event_id: 'a'.repeat(32),
      exception_type: 'Message',
      message: 'disk almost full',
      event_time: now.toISOString(),
      sentry: { kind: 'message', level: 'warning' },
    });
    const withStack = fromSentryEvent(
      {
        logentry: { message: 'user %s signed in', formatted: 'user 7 signed in' },
        exception: {
          values: [{ value: 'user 7 signed in', stacktrace: { frames: [{ filename: '/srv/a.js', lineno: 3 }] } }],
        },
      },
      now,
    );
    expect(withStack).toMatchObject({
      exception_type: 'Message',
      message: 'user 7 signed in',
      stack_frames: [{ file: '/srv/a.js', line: 3 }],
      sentry: { kind: 'message' },
    });
  });

  it("uses Cairn's grouping for {{ default }}, and hashes a fingerprint longer than 512 characters", () => {
    expect(fromSentryEvent({ fingerprint: ['{{ default }}', 'x'] }, now).fingerprint).toBeUndefined();
    expect(fromSentryEvent({ fingerprint: ['x'.repeat(600)] }, now).fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps both ends of a stack longer than 256 frames', () => {
    const frames = Array.from({ length: 300 }, (_, i) => ({ function: `f${i}`, lineno: i + 1 }));
    const mapped = fromSentryEvent(
      { exception: { values: [{ type: 'E', stacktrace: { frames } }] } },
      now,
    ).stack_frames!;
    expect(mapped).toHaveLength(256);
    expect(mapped[0]!.function).toBe('f0');
    expect(mapped.at(-1)!.function).toBe('f299');
  });

  it('normalises releases to labels', () => {
    expect(sentryLabel('my-app@1.2.3+build.4')).toBe('my-app@1.2.3+build.4');
    expect(sentryLabel('  /leading junk')).toBe('leading-junk');
    expect(sentryLabel('---')).toBeUndefined();
    expect(sentryLabel(12)).toBe('12');
  });
});

describe('properties', () => {
  it('maps any JSON object to a capture that capture itself accepts', () => {
    const frame = fc.record(
      {
        filename: fc.oneof(fc.string(), fc.integer()),
        abs_path: fc.string({ maxLength: 3000 }),
        function: fc.oneof(fc.string({ maxLength: 1100 }), fc.constant(null)),
        lineno: fc.oneof(fc.integer(), fc.double(), fc.string()),
        colno: fc.integer({ min: -5, max: 200_000_000 }),
        in_app: fc.oneof(fc.boolean(), fc.string()),
        pre_context: fc.oneof(
          fc.array(fc.oneof(fc.string({ maxLength: 300 }), fc.jsonValue()), { maxLength: 14 }),
          fc.jsonValue(),
        ),
        context_line: fc.oneof(fc.string({ maxLength: 300 }), fc.jsonValue()),
        post_context: fc.array(fc.oneof(fc.string({ maxLength: 300 }), fc.constant(null)), { maxLength: 14 }),
      },
      { requiredKeys: [] },
    );
    const exception = fc.record(
      {
        type: fc.oneof(fc.string({ maxLength: 300 }), fc.integer()),
        value: fc.string({ maxLength: 9000 }),
        stacktrace: fc.record({ frames: fc.array(frame, { maxLength: 5 }) }),
      },
      { requiredKeys: [] },
    );
    const event = fc.record(
      {
        event_id: fc.oneof(fc.string(), fc.uuid(), fc.stringMatching(/^[0-9a-f]{32}$/)),
        timestamp: fc.oneof(
          fc.double(),
          fc.string(),
          fc.date({ noInvalidDate: false }).map((d) => String(d)),
        ),
        release: fc.oneof(fc.string({ maxLength: 300 }), fc.integer(), fc.constant(null)),
        environment: fc.string({ maxLength: 300 }),
        tags: fc.oneof(
          fc.dictionary(fc.string({ maxLength: 40 }), fc.jsonValue({ maxDepth: 1 })),
          fc.array(fc.tuple(fc.jsonValue(), fc.jsonValue()), { maxLength: 80 }),
        ),
        message: fc.oneof(
          fc.string({ maxLength: 9000 }),
          fc.record({ formatted: fc.string(), message: fc.string() }, { requiredKeys: [] }),
        ),
        exception: fc.oneof(
          fc.record({ values: fc.array(exception, { maxLength: 3 }) }),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        breadcrumbs: fc.oneof(
          fc.record({
            values: fc.array(
              fc.dictionary(
                fc.constantFrom('timestamp', 'type', 'category', 'level', 'message', 'data'),
                fc.jsonValue({ maxDepth: 2 }),
              ),
              { maxLength: 120 },
            ),
          }),
          fc.jsonValue({ maxDepth: 2 }),
        ),
        fingerprint: fc.array(fc.oneof(fc.string({ maxLength: 300 }), fc.jsonValue({ maxDepth: 1 })), { maxLength: 4 }),
        contexts: fc.record(
          {
            trace: fc.record(
              { trace_id: fc.oneof(fc.string(), fc.stringMatching(/^[0-9a-f]{32}$/)), span_id: fc.string() },
              { requiredKeys: [] },
            ),
          },
          { requiredKeys: [] },
        ),
        request: fc.record(
          { headers: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.array(fc.tuple(fc.string(), fc.jsonValue()))) },
          { requiredKeys: [] },
        ),
        debug_meta: fc.jsonValue({ maxDepth: 3 }),
        sdk: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(event, (e) => {
        const { sentry, linked_exceptions, ...capture } = fromSentryEvent(e as Record<string, unknown>, now);
        // Breadcrumb data come whole, to be scrubbed whole; the worker cuts them once scrubbed.
        cutBreadcrumbData(capture.breadcrumbs ?? []);
        // A frame's code context, which capture does not take, is bounded: 10 lines a side, 241 characters a line.
        const frames = (capture.stack_frames ?? []).map(({ pre_context, context_line, post_context, ...f }) => {
          for (const side of [pre_context, post_context]) {
            expect(side === undefined || (side.length >= 1 && side.length <= 10)).toBe(true);
            for (const l of side ?? []) expect(typeof l === 'string' && l.length <= 241).toBe(true);
          }
          expect(context_line === undefined || context_line.length <= 241).toBe(true);
          return f;
        });
        const parsed = errorEventInput.safeParse({
          ...capture,
          ...(capture.stack_frames ? { stack_frames: frames } : {}),
        });
        expect(parsed.success, JSON.stringify(parsed.error?.issues.slice(0, 3))).toBe(true);
        expect(typeof sentry).toBe('object');
        // Causes, which capture does not take, are exceptions as capture bounds them, each hung on another or on the outer one.
        for (const [i, l] of (linked_exceptions ?? []).entries()) {
          const cause = errorEventInput.safeParse({
            event_time: capture.event_time,
            exception_type: l.exception_type,
            ...(l.message === undefined ? {} : { message: l.message }),
            stack_frames: l.stack_frames.map(({ pre_context: _p, context_line: _c, post_context: _q, ...f }) => f),
          });
          expect(cause.success, JSON.stringify(cause.error?.issues.slice(0, 3))).toBe(true);
          expect(
            l.parent === undefined || (l.parent >= 0 && l.parent < linked_exceptions!.length && l.parent !== i),
          ).toBe(true);
        }
      }),
      { numRuns: 400 },
    );
  });
});

describe('causes, processed', () => {
  /** Processes a Sentry event with these maps, whose store is away. */
  const processWith = (event: Record<string, unknown>, maps: MapRef[] = []) =>
    processEvent(fromSentryEvent(event, now), {
      maps,
      load: () => Promise.reject(new Error('the store is away')),
      policy: compilePolicy(defaultPolicy),
      caches: createPipelineCaches(),
    });
  const process = async (values: unknown[]) => unpackBody((await processWith({ exception: { values } })).stored);
  const frame = (fn: string) => ({ stacktrace: { frames: [{ function: fn, filename: '/srv/app.js', lineno: 3 }] } });

  it('hangs each cause on its parent by the mechanism ids, outermost first', async () => {
    // An AggregateError of two errors, the second of which has a cause of its own (Sentry's order: causes first).
    const body = await process([
      {
        type: 'DeepError',
        value: 'at the bottom',
        ...frame('deep'),
        mechanism: { exception_id: 3, parent_id: 2, source: 'cause' },
      },
      {
        type: 'SecondError',
        value: 'two',
        ...frame('two'),
        mechanism: { exception_id: 2, parent_id: 0, source: 'errors[1]' },
      },
      {
        type: 'FirstError',
        value: 'one for ann@example.com',
        ...frame('one'),
        mechanism: { exception_id: 1, parent_id: 0, source: 'errors[0]' },
      },
      {
        type: 'AggregateError',
        value: 'many',
        ...frame('all'),
        mechanism: { exception_id: 0, is_exception_group: true },
      },
    ]);
    expect(body.exception_type).toBe('AggregateError');
    expect(
      body.linked_exceptions!.map((l) => [l.source, l.exception_type, l.parent, l.stack_frames[0]!.function]),
    ).toEqual([
      ['errors[0]', 'FirstError', undefined, 'one'],
      ['errors[1]', 'SecondError', undefined, 'two'],
      ['cause', 'DeepError', 1, 'deep'],
    ]);
    // Scrubbed with the event.
    expect(body.linked_exceptions![0]!.message).toBe('one for [Filtered]');
    expect(body.sentry).not.toHaveProperty('causes');
  });

  it('reads a chain without mechanism ids as each cause of the one before', async () => {
    const body = await process([
      { type: 'C', value: 'c', ...frame('c') },
      { type: 'B', value: 'b', ...frame('b') },
      { type: 'A', value: 'a', ...frame('a') },
    ]);
    expect(body.linked_exceptions!.map((l) => [l.exception_type, l.parent])).toEqual([
      ['B', undefined],
      ['C', 0],
    ]);
  });

  it("says so when a cause's map could not be read, so the worker tries the event again", async () => {
    const ref = { file: '/srv/mapped.js', file_path: '/srv/mapped.js', sha256: 'x', size_bytes: 1, object_key: 'k' };
    const out = await processWith(
      {
        release: 'r1',
        exception: {
          values: [
            { type: 'Inner', stacktrace: { frames: [{ filename: '/srv/mapped.js', lineno: 1, colno: 1 }] } },
            { type: 'Outer', stacktrace: { frames: [{ filename: '/srv/other.js', lineno: 1, colno: 1 }] } },
          ],
        },
      },
      [ref],
    );
    expect(out.frames.map((f) => f.unmapped_reason)).toEqual(['no_map_for_file']);
    expect(out.mapUnavailable).toBe(true);
  });
});
