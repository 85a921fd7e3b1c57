// SpiderMonkey's closure names through the whole pipeline, over HTTP: a capture of a stack Firefox
// ESR printed is stored with its frames named as printed (`modules</Bar.prototype._baz/<`, an
// anonymous function inside that method, not the method), and lands in the group such a stack
// made when the names were cut to the function they are in: the same fingerprint, and the same
// group as an event sending the frames as they were read then.
import { describe, expect, it } from 'vitest';
import type { StackFrame } from '../../../src/domain/errors/pipeline/symbolicate.ts';
import { call } from '../../support/harness.ts';
import { fingerprintBefore, firefoxClosures, printedNames } from '../fixtures/firefox-closures.ts';
import { capture, envBase, groupIdOf, readStored, useStack } from '../support.ts';

const t = useStack();

const event = (more: Record<string, unknown>) => ({
  event_time: '2026-11-28T05:00:00Z',
  exception_type: 'Error',
  message: 'closure path',
  service_name: 'web',
  ...more,
});

describe('closure names over HTTP', () => {
  it('stores a Firefox stack with its frames named as printed, in the group it always went to', async () => {
    const uid = await capture(t.s.web, t.env, event({ stack: firefoxClosures }));
    const stored = (await readStored(t.s.web, t.env, uid)).body;
    const frames = stored.stack_frames as StackFrame[];
    expect(frames.map((f) => f.function)).toEqual(printedNames);
    expect(frames.at(-1)).toMatchObject({ file: 'http://127.0.0.1:39995/static/app.js', line: 55, column: 74 });

    const group = await call<{ fingerprint: string; culprit: string }>(
      t.s.web.url,
      'GET',
      `${envBase(t.env)}/error_groups/${groupIdOf(stored.name)}`,
      { key: t.env.secretKey },
    );
    expect(group.body.fingerprint).toBe(fingerprintBefore);
    expect(group.body.culprit).toBe('modules</Bar.prototype._baz/< (/static/app.js)');

    // The frames as the parser read them before (closure names cut), sent as frames: one group.
    const cut = frames.map((f) => ({
      ...(f.function === undefined ? {} : { function: f.function.replace(/[/<]+$/, '') }),
      file: f.file,
      line: f.line,
      column: f.column,
    }));
    const before = await capture(t.s.web, t.env, event({ stack_frames: cut }));
    const beforeStored = (await readStored(t.s.web, t.env, before)).body;
    expect(groupIdOf(beforeStored.name)).toBe(groupIdOf(stored.name));
  });
});
