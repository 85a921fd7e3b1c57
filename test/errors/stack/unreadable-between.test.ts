// A line no format reads between frames (a cause's head, Bluebird's `From previous event:`,
// pony-cause's `caused by:`) when the stack does not print the event's message: Firefox and
// Safari print no header at all, and a message can be absent, changed or cut. The frames above
// that line are the innermost, where the error was thrown: they are read, and the line counted.
import { describe, expect, it } from 'vitest';
import { parseStackTrace, splitStack } from '../../../src/domain/errors/pipeline/stack/index.ts';

const firefox = [
  'handleClick@https://app.example/main.js:10:5',
  'dispatch@https://app.example/main.js:20:7',
  'Caused by: TypeError: inner',
  'fetchData@https://app.example/main.js:30:9',
].join('\n');

const names = (stack: string, hint?: { exception_type: string; message?: string }): (string | undefined)[] =>
  parseStackTrace(stack, hint).frames.map((f) => f.function);

describe('an unreadable line between frames, the message not printed as the event has it', () => {
  it.each([
    ['a message the stack does not print', { exception_type: 'Error', message: 'outer' }],
    ['no message', { exception_type: 'Error' }],
    ['no hint', undefined],
  ] as const)('Firefox, %s: every frame is read and the line counted', (_n, hint) => {
    const parsed = parseStackTrace(firefox, hint);
    expect(parsed.frames.map((f) => f.function)).toEqual(['fetchData', 'dispatch', 'handleClick']);
    expect(parsed.unparsed_line_count).toBe(1);
    expect(parsed.unparsed_lines).toEqual(['Caused by: TypeError: inner']);
    expect(splitStack(firefox, hint)).toEqual({ message: '', frames: firefox });
  });

  it('Safari (JavaScriptCore), a cut message: the frames above an unreadable line are read', () => {
    const stack = [
      'render@https://app.example/app.js:3:14',
      'From previous event:',
      'global code@https://app.example/app.js:9:1',
    ].join('\n');
    expect(names(stack, { exception_type: 'TypeError', message: 'undefined is not an obj' })).toEqual([
      'global code',
      'render',
    ]);
    expect(parseStackTrace(stack).unparsed_line_count).toBe(1);
  });

  const bluebird = [
    'Error: connection reset',
    '    at Socket.onEnd (/srv/app/db.js:41:11)',
    '    at Query.run (/srv/app/db.js:12:3)',
    'From previous event:',
    '    at Repo.find (/srv/app/repo.js:7:10)',
    '    at handler (/srv/app/http.js:30:5)',
  ].join('\n');

  it.each([
    ['changed', 'connection reset by peer'],
    ['cut', 'connection re'],
  ])('V8 with Bluebird’s long stack, the message %s: every frame is read', (_n, message) => {
    const hint = { exception_type: 'Error', message };
    const parsed = parseStackTrace(bluebird, hint);
    expect(parsed.frames.map((f) => f.function)).toEqual(['handler', 'Repo.find', 'Query.run', 'Socket.onEnd']);
    expect(parsed.unparsed_lines).toEqual(['From previous event:']);
    expect(splitStack(bluebird, hint).message).toBe('Error: connection reset\n');
  });

  it('V8 with pony-cause’s `caused by:` lines, the message changed: every frame is read', () => {
    const stack = [
      'Error: save failed',
      '    at save (/srv/app/save.js:5:9)',
      'caused by: Error: disk full',
      '    at write (/srv/app/fs.js:2:3)',
      'caused by: Error: ENOSPC',
      '    at open (/srv/app/fs.js:1:1)',
    ].join('\n');
    const parsed = parseStackTrace(stack, { exception_type: 'Error', message: 'save failed (retried)' });
    expect(parsed.frames.map((f) => f.function)).toEqual(['open', 'write', 'save']);
    expect(parsed.unparsed_line_count).toBe(2);
  });

  it('without the message, frames separated by several unreadable lines are read up to the first block', () => {
    // `at a` directly under the first line may be the message's (a message can print frame-shaped
    // lines): it is the header; the frames after the first unreadable line below it are all read.
    const stack = [
      'Error: x',
      '    at a (/srv/a.js:1:1)',
      'From previous event:',
      '    at b (/srv/b.js:2:2)',
      'From previous event:',
      '    at c (/srv/c.js:3:3)',
    ].join('\n');
    const parsed = parseStackTrace(stack);
    expect(parsed.frames.map((f) => f.function)).toEqual(['c', 'b']);
    expect(parsed.unparsed_line_count).toBe(1);
  });
});
