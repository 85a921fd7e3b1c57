// SpiderMonkey's closure names (`test/<`) stay on the frame as printed, while the group key of a
// stack read from its text is made as it was when those names were cut to `test`, so a group such
// stacks made before keeps its events (fixtures/firefox-closures.ts: a stack Firefox ESR printed,
// and the fingerprint the code before this rule gave it).
import { describe, expect, it } from 'vitest';
import { closureOwner, groupKey, stackKeys } from '../../../src/domain/errors/pipeline/fingerprint.ts';
import { isInApp } from '../../../src/domain/errors/pipeline/paths.ts';
import { parseStackTrace } from '../../../src/domain/errors/pipeline/stack/index.ts';
import { fingerprintBefore, firefoxClosures } from '../fixtures/firefox-closures.ts';

const keyFramesOf = (stack: string) =>
  parseStackTrace(stack).frames.map((f) => ({ function: f.function, file: f.file, in_app: isInApp(f.file) }));

describe('closure names', () => {
  it('group a printed stack under the key it had when closure names were cut', () => {
    const frames = keyFramesOf(firefoxClosures);
    const key = groupKey({ exception_type: 'Error', frames }, stackKeys(frames, true));
    expect(key.fingerprint).toBe(fingerprintBefore);
  });

  it('stay on the frames as printed; the key names the function the closures are in', () => {
    const frames = keyFramesOf(firefoxClosures);
    expect(frames.slice(-4).map((f) => f.function)).toEqual([
      'modules<',
      'modules</Bar.prototype._baz',
      'modules</Bar.prototype._baz/<',
      'modules</Bar.prototype._baz/<',
    ]);
    const key = groupKey({ exception_type: 'Error', frames }, stackKeys(frames, true));
    // Repeated frames count once: the two closures and the method they are in are one key frame.
    expect(key.grouping.frames.slice(-2).map((f) => f.function)).toEqual(['modules', 'modules</Bar.prototype._baz']);
    expect(key.culprit).toBe('modules</Bar.prototype._baz/< (/static/app.js)');
  });

  it('are keyed as sent when a client sends the frames (Sentry SDKs send `test/<`)', () => {
    const frames = [{ function: 'test/<', file: 'http://localhost:5000/', in_app: true }];
    expect(groupKey({ exception_type: 'Error', frames }).grouping.frames.map((f) => f.function)).toEqual(['test/<']);
  });

  it.each([
    ['test/<', 'test'],
    ['[2]</Bar.prototype._baz/</<', '[2]</Bar.prototype._baz'],
    ['modules<', 'modules'],
    ['</<', undefined],
    ['plain', 'plain'],
    [undefined, undefined],
  ])('%s is keyed as %s', (name, key) => {
    expect(closureOwner(name)).toBe(key);
  });
});
