// Messages that span lines, written by hand in the shapes real messages take: the event's own
// message (the hint) cuts the header exactly; without it the body runs from the topmost frame, but
// for frame-shaped message lines that an unreadable line follows (body.ts). A body that holds a
// frame never reads as zero frames and zero unparsed lines.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bodyStart, layout } from '../../../src/domain/errors/pipeline/stack/body.ts';
import { Lines } from '../../../src/domain/errors/pipeline/stack/lines.ts';
import { parseStackBody, parseStackTrace, splitStack } from '../../../src/domain/errors/pipeline/stack/index.ts';

const v8Body = [
  '    at Context.<anonymous> (/srv/app/test/totals.test.js:10:12)',
  '    at process.processImmediate (node:internal/timers:483:21)',
].join('\n');
const v8Frames = [
  { function: 'process.processImmediate', file: 'node:internal/timers', line: 483, column: 21 },
  { function: 'Context.<anonymous>', file: '/srv/app/test/totals.test.js', line: 10, column: 12 },
];

const shapes: Record<string, { type: string; message: string }> = {
  'an assertion diff': {
    type: 'AssertionError',
    message:
      'Expected values to be strictly deep-equal:\n+ actual - expected\n\n  {\n+   total: 3,\n-   total: 4\n  }\n',
  },
  'a SQL error with its query': {
    type: 'Error',
    message: 'syntax error at or near "FROM"\n  SELECT id,\n         name,\n    FROM users\n   WHERE id = $1',
  },
  'a JSON body': { type: 'SyntaxError', message: 'invalid body: {\n  "user": {\n    "id": 7\n  },\n  "items": []\n}' },
  'a function source whose closing brace is indented': {
    type: 'TypeError',
    message: 'handler is not a valid callback: function onRequest(req) {\n    return { status: 401 };\n  }',
  },
  'V8 frame lines': { type: 'Error', message: 'lookup failed:\n    at x (y:1:2)\n    at async z (w.js:3:4)\nend' },
  '`fn@file:1:2` lines': { type: 'Error', message: 'paint failed\nfn@file:1:2\n@http://cdn.example.com/a.js:3:4\nend' },
  'lone braces': { type: 'Error', message: 'bad state\n{\n}' },
  'empty lines': { type: 'RangeError', message: '\nfirst\n\n\nlast\n' },
  'what Node prints after a stack': {
    type: 'Error',
    message: "wrapped {\n  code: 'E_FAKE',\n  [cause]: Error: y\n      at g (/x.js:1:1)\n}\n\nNode.js v24.0.0",
  },
  'an uncaught-exception header': {
    type: 'Error',
    message: '/srv/app/x.js:12\n  call(\n      ^\n\nSyntaxError: inner',
  },
};

describe('a message that spans lines', () => {
  it.each(Object.entries(shapes))('%s: with the hint, the header is the message, the frames all read', (_n, s) => {
    const stack = `${s.type}: ${s.message}\n${v8Body}`;
    const hint = { exception_type: s.type, message: s.message };
    expect(splitStack(stack, hint)).toEqual({ message: `${s.type}: ${s.message}\n`, frames: v8Body });
    const parsed = parseStackTrace(stack, hint);
    expect(parsed.frames).toEqual(v8Frames);
    expect(parsed.unparsed_line_count).toBe(0);
    // Without it, the same: no message line ends in a frame.
    expect(splitStack(stack).frames).toBe(v8Body);
    expect(parseStackTrace(stack)).toEqual(parsed);
  });

  it('with `\\r\\n` line ends, in the message and the stack', () => {
    const message = 'windows line\r\n  third {\r\n}';
    const stack = `Error: ${message}\r\n${v8Body.replaceAll('\n', '\r\n')}`;
    for (const hint of [{ exception_type: 'Error', message }, undefined]) {
      const parsed = parseStackTrace(stack, hint);
      expect(parsed.frames).toEqual(v8Frames);
      expect(parsed.unparsed_line_count).toBe(0);
      expect(splitStack(stack, hint).message).toBe(`Error: ${message}\r\n`);
    }
  });

  it('a Chromium message holding a function source: frames come back, with and without the hint', () => {
    // Read as own properties opened by `… {` until here, this lost every frame.
    const message = 'handler is not a valid callback: function onRequest(req) {\n    return 1;\n  }';
    const stack = `TypeError: ${message}\n    at register (https://shop.example.com/app.js:16:23)`;
    for (const hint of [{ exception_type: 'TypeError', message }, undefined])
      expect(parseStackTrace(stack, hint).frames).toEqual([
        { function: 'register', file: 'https://shop.example.com/app.js', line: 16, column: 23 },
      ]);
  });

  it('without the hint, message lines that read as frames right above the frames are taken for frames', () => {
    const stack = `Error: probe failed\n    at x (y:1:2)\n${v8Body}`;
    expect(splitStack(stack).message).toBe('Error: probe failed\n');
    expect(parseStackTrace(stack).frames).toEqual([...v8Frames, { function: 'x', file: 'y', line: 1, column: 2 }]);
    const hinted = parseStackTrace(stack, { exception_type: 'Error', message: 'probe failed\n    at x (y:1:2)' });
    expect(hinted.frames).toEqual(v8Frames);
  });

  it('keeps Node’s own properties after a message with braces, and the message a hint does not match', () => {
    const stack = [
      'Error: config rejected {',
      '  "retries": -1',
      '}',
      '    at load (/srv/app/config.js:4:9) {',
      "  code: 'E_CONFIG',",
      '  [cause]: TypeError: bad retries',
      '      at check (/srv/app/config.js:9:3)',
      '}',
      '',
      'Node.js v24.11.1',
    ].join('\n');
    // A hint the stack does not print (a message cut short by an SDK) falls back to the bottom.
    for (const hint of [
      { exception_type: 'Error', message: 'config rejected {\n  "retries": -1\n}' },
      undefined,
      { exception_type: 'Error', message: 'config rej…' },
    ]) {
      const parsed = parseStackTrace(stack, hint);
      expect(parsed.frames).toEqual([{ function: 'load', file: '/srv/app/config.js', line: 4, column: 9 }]);
      expect(parsed.linked.map((l) => [l.exception_type, l.message, l.frames.length])).toEqual([
        ['TypeError', 'bad retries', 1],
      ]);
      expect(parsed.unparsed_line_count).toBe(0);
    }
  });

  it('reads own properties cut short (no closing brace, as at the size limit) as before', () => {
    const stack = [
      'Error: a {',
      '}',
      '    at f (/a.js:1:1) {',
      "  code: 'E',",
      '  [cause]: TypeError: b',
      '      at g (/a.js:2:2)',
    ].join('\n');
    for (const hint of [{ exception_type: 'Error', message: 'a {\n}' }, undefined]) {
      const parsed = parseStackTrace(stack, hint);
      expect(parsed.frames).toEqual([{ function: 'f', file: '/a.js', line: 1, column: 1 }]);
      expect(parsed.linked.map((l) => [l.exception_type, l.frames.length])).toEqual([['TypeError', 1]]);
      expect(parsed.unparsed_line_count).toBe(0);
    }
  });

  it('reads a Firefox stack, which prints no header, whole with the hint', () => {
    const stack = 'render@https://x.io/a.js:3:4\n@https://x.io/a.js:9:1\n';
    const parsed = parseStackTrace(stack, { exception_type: 'Error', message: 'a\nb {\n}' });
    expect(parsed.frames.map((f) => f.line)).toEqual([9, 3]);
    expect(splitStack(stack, { exception_type: 'Error', message: 'a\nb' }).message).toBe('');
  });
});

// Lines of any kind, and the pieces that look like frames, braces, Node's decorations.
const messageLine = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('    at x (y:1:2)', 'fn@file:1:2', '{', '}', '  }', 'a {', '', ' ', '    ... 2 lines matching ...'),
  fc.constantFrom('Node.js v24.0.0', '  [cause]: Error: y', '/srv/x.js:1', '   ^', 'Error: inner', '\r', '[Error: z]'),
);
const bodies: [string, number][] = [
  [v8Body, 2],
  ['render@https://x.io/a.js:3:4\nglobal code@https://x.io/a.js:9:1', 2],
  ['    at f (/a.js:1:2) {\n  code: 1,\n  [cause]: Error: c\n      at g (/a.js:2:2)\n}', 1],
  [
    '    at async Promise.all (index 0)\n\n    ... 3 lines matching cause stack trace ...\n    at h (file:///a.mjs:1:1)',
    2,
  ],
];

describe('a message of any lines before a real body', () => {
  it('with the hint gives exactly the body’s frames; without it, never zero frames and zero unparsed lines', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('Error', 'TypeError', 'AssertionError [ERR_ASSERTION]'),
        fc.array(messageLine, { maxLength: 12 }).map((l) => l.join('\n')),
        fc.constantFrom(...bodies),
        (type, message, [body, count]) => {
          const stack = `${type}: ${message}\n${body}`;
          const hinted = parseStackTrace(stack, { exception_type: type, message });
          expect(hinted.frames).toEqual(parseStackBody(body).frames);
          expect(hinted.frames).toHaveLength(count);
          expect(hinted.unparsed_line_count).toBe(0);
          const bare = parseStackTrace(stack);
          expect(bare.frames.length + bare.unparsed_line_count).toBeGreaterThan(0);
          expect(bare.frames.length).toBeGreaterThanOrEqual(1);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe("splitStack's shortcut (body.ts bodyStart)", () => {
  it('finds the body where layout finds it, for any message and body, the hint right or wrong', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('Error', 'TypeError'),
        fc.array(messageLine, { maxLength: 8 }).map((l) => l.join('\n')),
        fc.constantFrom(...bodies.map(([b]) => b), '', 'Error: x {\n  a: 1\n}', '    at f (/a.js:1:2)\n  code: 1\n}'),
        fc.boolean(),
        fc.constantFrom('', ' {', ']', '] {'),
        (type, message, body, rightHint, decoration) => {
          const stack = `${type}: ${message}${decoration}\n${body}`;
          const hint = { exception_type: type, message: rightHint ? message : `${message}!` };
          expect(bodyStart(new Lines(stack), hint)).toBe(layout(new Lines(stack), hint).start);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
