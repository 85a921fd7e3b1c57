// The stack parser against golden fixtures, one per engine (V8 in Chrome and Node, SpiderMonkey,
// JavaScriptCore), plus grouping normalisation and the bounds on hostile input.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupKey, normalizeMessage } from '../../src/domain/errors/pipeline/fingerprint.ts';
import { filePath, isInApp, normalizeFile } from '../../src/domain/errors/pipeline/paths.ts';
import {
  parseStack,
  parseStackBody,
  parseStackTrace,
  splitStack,
} from '../../src/domain/errors/pipeline/stack/index.ts';
import type { StackFrame } from '../../src/domain/errors/pipeline/symbolicate.ts';

const fixture = (name: string) => new URL(`./fixtures/stacks/${name}`, import.meta.url);

describe('stack parser golden fixtures', () => {
  for (const engine of ['chrome', 'node', 'firefox', 'safari']) {
    it(`parses ${engine} stacks, innermost last`, () => {
      const frames = parseStack(readFileSync(fixture(`${engine}.txt`), 'utf8'));
      expect(frames).toEqual(JSON.parse(readFileSync(fixture(`${engine}.json`), 'utf8')));
      expect(frames.length).toBeGreaterThan(4);
    });
  }

  it('skips message lines, even ones holding an address', () => {
    const frames = parseStack('Error: no user jane@example.com\n  details: a@b.io\n    at f (/a.js:1:2)');
    expect(frames).toEqual([{ function: 'f', file: '/a.js', line: 1, column: 2 }]);
  });
});

describe('file normalisation', () => {
  it.each([
    ['https://cdn.example.com/static/js/main.8f3a2c.js?v=3#x', '/static/js/main.8f3a2c.js', '/static/js/main.js'],
    ['webpack:///./src/api/users.ts', '/./src/api/users.ts', 'src/api/users.ts'],
    ['https://x.io/assets/index-BkzX9a1c.js', '/assets/index-BkzX9a1c.js', '/assets/index.js'],
    ['/srv/app/dist/chunk-ABCD1234.js', '/srv/app/dist/chunk-ABCD1234.js', '/srv/app/dist/chunk.js'],
    ['/srv/app/src/my-component2.js', '/srv/app/src/my-component2.js', '/srv/app/src/my-component2.js'],
    ['C:\\app\\src\\x.js', 'C:/app/src/x.js', 'C:/app/src/x.js'],
  ])('%s', (file, path, normal) => {
    expect(filePath(file)).toBe(path);
    expect(normalizeFile(file)).toBe(normal);
  });

  it('knows in-app code from dependencies and the runtime', () => {
    expect(isInApp('/srv/app/src/x.js')).toBe(true);
    expect(isInApp('webpack:///node_modules/react/index.js')).toBe(false);
    expect(isInApp('https://x.io/vendor/jquery.js')).toBe(false);
    expect(isInApp('node:internal/process/task_queues')).toBe(false);
    expect(isInApp('[native code]')).toBe(false);
    expect(isInApp(undefined)).toBe(false);
  });
});

describe('group key', () => {
  const frame = (fn: string, file: string, line: number, inApp = true): StackFrame => ({
    function: fn,
    file,
    line,
    column: line * 3,
    in_app: inApp,
  });

  it('ignores lines, columns, bundle hashes and vendor frames', () => {
    const a = groupKey({
      exception_type: 'TypeError',
      frames: [frame('lib', '/node_modules/x/a.js', 1, false), frame('run', '/app/main.1a2b3c4d.js', 10)],
    });
    const b = groupKey({
      exception_type: 'TypeError',
      frames: [frame('lib2', '/node_modules/x/b.js', 9, false), frame('run', '/app/main.9f8e7d6c.js', 77)],
    });
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.grouping).toEqual({ method: 'in_app_frames', frames: [{ function: 'run', file: '/app/main.js' }] });
    expect(groupKey({ exception_type: 'RangeError', frames: [frame('run', '/app/main.js', 1)] }).fingerprint).not.toBe(
      a.fingerprint,
    );
  });

  it("takes the caller's fingerprint first, and the message when there are no frames", () => {
    const custom = groupKey({ exception_type: 'E', fingerprint: 'checkout-timeout', frames: [frame('x', '/a.js', 1)] });
    expect(custom.grouping.method).toBe('fingerprint');
    expect(groupKey({ exception_type: 'Other', fingerprint: 'checkout-timeout', frames: [] }).fingerprint).toBe(
      custom.fingerprint,
    );
    // The key's hash is over the same JSON as before the frames' JSON was made once per stack, so
    // groups made before keep their events.
    const frames = [frame('lib', '/node_modules/x/a.js', 1, false), frame('run', '/app/main.1a2b3c4d.js', 10)];
    const legacy = createHash('sha256')
      .update(JSON.stringify(['in_app_frames', 'TypeError', [{ function: 'run', file: '/app/main.js' }]]))
      .digest('hex')
      .slice(0, 40);
    expect(groupKey({ exception_type: 'TypeError', frames }).fingerprint).toBe(legacy);
    const allLegacy = createHash('sha256')
      .update(JSON.stringify(['all_frames', 'E', [{ function: 'lib', file: '/node_modules/x/a.js' }]]))
      .digest('hex')
      .slice(0, 40);
    expect(
      groupKey({ exception_type: 'E', frames: [frame('lib', '/node_modules/x/a.js', 1, false)] }).fingerprint,
    ).toBe(allLegacy);
    const m1 = groupKey({ exception_type: 'E', message: 'user 123 not found', frames: [] });
    expect(m1.fingerprint).toBe(
      groupKey({ exception_type: 'E', message: 'user 98765 not found', frames: [] }).fingerprint,
    );
    expect(normalizeMessage('id 550e8400-e29b-41d4-a716-446655440000 at 0xdeadbeef')).toBe('id <uuid> at <hex>');
  });
});

describe('splitStack', () => {
  it('cuts a stack before its first frame line, joins back exactly, and parses the same', () => {
    expect(splitStack('TypeError: x (at y:1:2)\n    at a (f.js:1:2)\n    at b (f.js:3:4)')).toEqual({
      message: 'TypeError: x (at y:1:2)\n',
      frames: '    at a (f.js:1:2)\n    at b (f.js:3:4)',
    });
    expect(splitStack('Error: a@b.c:1:2\r\nfn@f.js:1:2')).toEqual({
      message: 'Error: a@b.c:1:2\r\n',
      frames: 'fn@f.js:1:2',
    });
    expect(splitStack('Error: no frames here')).toEqual({ message: 'Error: no frames here', frames: '' });
    expect(splitStack('Error: no frames\nLine 42 of linked script')).toEqual({
      message: 'Error: no frames\n',
      frames: 'Line 42 of linked script',
    });
    const line = fc.oneof(
      fc.string(),
      fc.constantFrom(
        '    at a (f.js:1:2)',
        'fn@f.js:3:4',
        'TypeError: m',
        '    at new B (webpack:///src/b.ts:9:1)',
        '',
        '\r',
      ),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), fc.constantFrom('\n', '\r\n'), (lines, nl) => {
        const stack = lines.join(nl);
        const { message, frames } = splitStack(stack);
        expect(message + frames).toBe(stack);
        expect(parseStackBody(frames)).toEqual(parseStackTrace(stack));
      }),
      { numRuns: 500 },
    );
  });
});
