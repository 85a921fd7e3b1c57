// Debug ids as maps and events write them (src/domain/errors/source-maps/debug-ids.ts).
import { describe, expect, it } from 'vitest';
import { debugIdOf, parseDebugId } from '../../../src/domain/errors/source-maps/debug-ids.ts';

describe('debug ids', () => {
  it('reads the forms sentry-cli, the bundler plugins and older tools write', () => {
    const id = 'c0ffee00-1234-4abc-8def-0123456789ab';
    expect(parseDebugId(id)).toBe(id);
    expect(parseDebugId(id.toUpperCase())).toBe(id);
    expect(parseDebugId(id.replace(/-/g, ''))).toBe(id);
    expect(parseDebugId(`${id}-0`)).toBe(id);
    expect(parseDebugId(` ${id}\n`)).toBe(id);
    expect(debugIdOf({ version: 3, debugId: id })).toBe(id);
    expect(debugIdOf({ version: 3, debug_id: id.toUpperCase() })).toBe(id);
  });

  it('refuses anything else', () => {
    for (const bad of [
      '',
      'c0ffee00',
      'z0ffee00-1234-4abc-8def-0123456789ab',
      'c0ffee00-1234-4abc-8def-0123456789ab-',
      7,
      null,
    ])
      expect(parseDebugId(bad)).toBeNull();
    expect(debugIdOf({ version: 3 })).toBeNull();
    expect(debugIdOf(null)).toBeNull();
    expect(debugIdOf('x')).toBeNull();
  });
});
