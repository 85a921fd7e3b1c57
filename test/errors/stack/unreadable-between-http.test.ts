// Firefox stacks captured over HTTP: one with a line no format reads between its frames and a
// message the stack does not print (Firefox prints none) reads back with every frame, the crash
// site innermost, and the line counted and kept, scrubbed; one whose URLs hold `@` keeps them whole.
import { describe, expect, it } from 'vitest';
import type { StackFrame } from '../../../src/domain/errors/pipeline/symbolicate.ts';
import { capture, readStored, useStack } from '../support.ts';

const t = useStack();

describe('Firefox stacks over HTTP', () => {
  it('keeps the frames above it and counts it', async () => {
    const stack = [
      'handleClick@https://app.example/main.js:10:5',
      'dispatch@https://app.example/main.js:20:7',
      'Caused by: TypeError: inner, password=hunter2',
      'fetchData@https://app.example/main.js:30:9',
    ].join('\n');
    const uid = await capture(t.s.web, t.env, {
      event_time: '2026-11-28T05:00:00Z',
      exception_type: 'Error',
      message: 'outer',
      service_name: 'web',
      stack,
    });
    const stored = (await readStored(t.s.web, t.env, uid)).body;
    const frames = stored.stack_frames as StackFrame[];
    expect(frames.map((f) => f.function)).toEqual(['fetchData', 'dispatch', 'handleClick']);
    expect(frames.at(-1)).toMatchObject({ file: 'https://app.example/main.js', line: 10, column: 5 });
    expect(stored.unparsed_line_count).toBe(1);
    expect(stored.unparsed_lines).toEqual(['Caused by: TypeError: inner, password=[Filtered]']);
  });

  it('keeps a URL holding `@` whole: Vite serves its runtime at /@react-refresh', async () => {
    const stack = [
      'performReactRefresh@http://localhost:5173/@react-refresh:267:29',
      'fn@http://localhost:5173/src/a.js?u=me@example.com:1:2',
    ].join('\n');
    const uid = await capture(t.s.web, t.env, {
      event_time: '2026-11-28T05:00:00Z',
      exception_type: 'Error',
      message: 'refresh',
      service_name: 'web',
      stack,
    });
    const frames = (await readStored(t.s.web, t.env, uid)).body.stack_frames as StackFrame[];
    expect(frames.map((f) => [f.function, f.file, f.line])).toEqual([
      // The query's value is scrubbed as every stored URL's is; its file and line were read whole.
      ['fn', 'http://localhost:5173/src/a.js?u=[Filtered]', 1],
      ['performReactRefresh', 'http://localhost:5173/@react-refresh', 267],
    ]);
  });
});
