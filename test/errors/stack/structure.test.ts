// Whole printed stacks: message lines, Node's own printing of errors (util.inspect: own properties,
// `[cause]`, AggregateError `[errors]`, elided lines; the uncaught-exception header and trailer),
// and lines no format reads, which are counted and kept, never dropped.
import { describe, expect, it } from 'vitest';
import { maxFrames, parseStackTrace, splitStack } from '../../../src/domain/errors/pipeline/stack/index.ts';

const inspected = [
  'Error: outer fail',
  '    at outer (/srv/app/a.js:4:71)',
  '    at async /srv/app/prices.js:37:5 {',
  "  code: 'E_OUTER',",
  '  details: {',
  "    cause: 'not a linked error',",
  '    nested: { deep: true }',
  '  },',
  '  [cause]: Error: mid fail',
  '      at mid (/srv/app/a.js:3:57)',
  '      ... 2 lines matching cause stack trace ...',
  '      at outer (/srv/app/a.js:4:44) {',
  "    code: 'E_MID',",
  '    [cause]: TypeError [ERR_INVALID_ARG_TYPE]: inner bad',
  '        at inner (/srv/app/a.js:2:26)',
  '        at mid (/srv/app/a.js:3:24)',
  '  }',
  '}',
].join('\n');

describe("Node's printing of errors", () => {
  it('ends the stack where own properties begin and reads [cause] blocks as linked exceptions', () => {
    const parsed = parseStackTrace(inspected);
    expect(parsed.frames).toEqual([
      { file: '/srv/app/prices.js', line: 37, column: 5 },
      { function: 'outer', file: '/srv/app/a.js', line: 4, column: 71 },
    ]);
    expect(parsed.unparsed_line_count).toBe(0);
    expect(parsed.linked).toEqual([
      {
        source: 'cause',
        exception_type: 'Error',
        message: 'mid fail',
        unparsed_lines: [],
        unparsed_line_count: 0,
        frames: [
          { function: 'outer', file: '/srv/app/a.js', line: 4, column: 44 },
          { function: 'mid', file: '/srv/app/a.js', line: 3, column: 57 },
        ],
      },
      {
        source: 'cause',
        parent: 0,
        exception_type: 'TypeError [ERR_INVALID_ARG_TYPE]',
        message: 'inner bad',
        unparsed_lines: [],
        unparsed_line_count: 0,
        frames: [
          { function: 'mid', file: '/srv/app/a.js', line: 3, column: 24 },
          { function: 'inner', file: '/srv/app/a.js', line: 2, column: 26 },
        ],
      },
    ]);
  });

  it("reads AggregateError's [errors] in order, with their own properties and causes", () => {
    const parsed = parseStackTrace(
      [
        'AggregateError: all failed',
        '    at /srv/app/a.js:7:15 {',
        '  [errors]: [',
        '    Error: one',
        '        at /srv/app/a.js:7:35 {',
        '      status: 502,',
        '      [cause]: Error: upstream',
        '          at up (/srv/app/b.js:1:1)',
        '    },',
        "    'a plain string',",
        '    RangeError: two',
        '        at /srv/app/a.js:7:53',
        '  ]',
        '}',
      ].join('\n'),
    );
    expect(parsed.frames).toEqual([{ file: '/srv/app/a.js', line: 7, column: 15 }]);
    expect(parsed.linked.map((l) => [l.source, l.parent, l.exception_type, l.message, l.frames.length])).toEqual([
      ['errors[0]', undefined, 'Error', 'one', 1],
      ['cause', 0, 'Error', 'upstream', 1],
      ['errors[2]', undefined, 'RangeError', 'two', 1],
    ]);
  });

  it('skips the uncaught-exception header and the Node.js trailer', () => {
    const printed = [
      'file:///srv/app/server.mjs:11',
      '  setTimeout(() => { throw z; });',
      '                     ^',
      '',
      'Error: uncaught',
      '    at Timeout._onTimeout (file:///srv/app/server.mjs:11:32)',
      '    at listOnTimeout (node:internal/timers:685:17) {',
      '  status: 500',
      '}',
      '',
      'Node.js v24.11.1',
    ].join('\n');
    const parsed = parseStackTrace(printed);
    expect(parsed.frames).toEqual([
      { function: 'listOnTimeout', file: 'node:internal/timers', line: 685, column: 17 },
      { function: 'Timeout._onTimeout', file: 'file:///srv/app/server.mjs', line: 11, column: 32 },
    ]);
    expect(parsed.unparsed_line_count).toBe(0);
    const split = splitStack(printed);
    expect(split.message).toBe(printed.slice(0, printed.indexOf('    at Timeout')));
    expect(split.message + split.frames).toBe(printed);
  });

  it('reads a cause whose stack Node decorated with its own header (an error thrown in vm code)', () => {
    const parsed = parseStackTrace(
      [
        'Error: checkout failed',
        '    at /srv/app/a.js:38:17 {',
        '  order: 42,',
        '  [cause]: https://shop.example.com/assets/main.js:1',
        '  "use strict";var App=(()=>{function s(e){throw new TypeError(e)}})();',
        '                                            ^',
        '  ',
        '  TypeError: not a price: abc',
        '      at s (https://shop.example.com/assets/main.js:1:547)',
        '      at Script.runInContext (node:vm:149:12)',
        '}',
      ].join('\n'),
    );
    expect(parsed.linked).toEqual([
      {
        source: 'cause',
        exception_type: 'TypeError',
        message: 'not a price: abc',
        unparsed_lines: [],
        unparsed_line_count: 0,
        frames: [
          { function: 'Script.runInContext', file: 'node:vm', line: 149, column: 12 },
          { function: 's', file: 'https://shop.example.com/assets/main.js', line: 1, column: 547 },
        ],
      },
    ]);
  });

  it("keeps a linked error's own multi-line message", () => {
    const parsed = parseStackTrace(
      [
        'Error: a',
        '    at f (/a.js:1:1) {',
        '  [cause]: Error: first line',
        '  second line',
        '      at g (/a.js:2:2)',
        '}',
      ].join('\n'),
    );
    expect(parsed.linked).toMatchObject([
      { exception_type: 'Error', message: 'first line\nsecond line', frames: [{ function: 'g' }] },
    ]);
  });
});

describe('lines no format reads', () => {
  it('are counted and kept, not dropped, and do not end the stack', () => {
    const parsed = parseStackTrace(
      [
        'Error: x',
        '    at f (/a.js:1:2)',
        '    at something we have never seen',
        '    at g (/a.js:3:4)',
        'garbage ###',
      ].join('\n'),
    );
    expect(parsed.frames.map((f) => f.function)).toEqual(['g', 'f']);
    expect(parsed.unparsed_line_count).toBe(2);
    expect(parsed.unparsed_lines).toEqual(['    at something we have never seen', 'garbage ###']);
  });

  it('are counted after the own properties end, the trailer aside', () => {
    const parsed = parseStackTrace(
      'Error: x\n    at f (/a.js:1:2) {\n  code: 1\n}\nsomething else\n\nNode.js v24.11.1',
    );
    expect(parsed.unparsed_lines).toEqual(['something else']);
  });

  it('are counted in a stack with no frame at all, after its message line', () => {
    const parsed = parseStackTrace('Error: x\nLine 42 of linked script\nLine 7 of inline#1 script', {
      exception_type: 'Error',
      message: 'x',
    });
    expect(parsed.frames).toEqual([]);
    expect(parsed.unparsed_line_count).toBe(2);
  });

  it('never count message lines, blank lines or elisions', () => {
    const parsed = parseStackTrace(
      'TypeError: x\nmore of the message\n\n    at f (/a.js:1:2)\n\n    ... 3 lines matching cause stack trace ...\n',
    );
    expect(parsed.frames).toHaveLength(1);
    expect(parsed.unparsed_line_count).toBe(0);
  });

  it("skip the event's own message even when it holds frame-shaped lines", () => {
    const message = 'bad row\n    at line (row.csv:1:2)';
    const parsed = parseStackTrace(`Error: ${message}\n    at f (/a.js:1:2)`, { exception_type: 'Error', message });
    expect(parsed.frames).toEqual([{ function: 'f', file: '/a.js', line: 1, column: 2 }]);
    expect(splitStack(`Error: ${message}\n    at f (/a.js:1:2)`, { exception_type: 'Error', message }).frames).toBe(
      '    at f (/a.js:1:2)',
    );
  });
});

describe('bounds', () => {
  it(`keeps at most ${maxFrames} frames of an exception, the innermost`, () => {
    const frames = parseStackTrace(
      Array.from({ length: 400 }, (_, i) => `    at f${i} (/a.js:${i + 1}:1)`).join('\n'),
    ).frames;
    expect(frames).toHaveLength(maxFrames);
    expect(frames.at(-1)?.function).toBe('f0');
  });
});
