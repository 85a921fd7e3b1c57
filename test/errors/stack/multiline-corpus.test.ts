// Messages that span lines, captured from every engine here (test/errors/corpus/capture/
// multiline.js, CORPUS_SET=multiline): corpus.test.ts checks their frames with the event's message;
// this checks where the header ends, with and without it. Each case records the header as the
// engine printed it: for V8 engines the stack before its CallSites' own lines, for Deno, Bun and
// Hermes the `Type: message` lines, for Firefox and JavaScriptCore nothing (their stacks have none).
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  parseStackBody,
  parseStackTrace,
  splitStack,
  type ParsedFrame,
} from '../../../src/domain/errors/pipeline/stack/index.ts';

interface Case {
  id: string;
  engine: string;
  stack: string;
  exception_type: string;
  message?: string;
  header: string;
  frame_count: number;
  frames: ParsedFrame[];
}

const dir = new URL('../fixtures/corpus/', import.meta.url);
const cases = readdirSync(dir)
  .filter((f) => f.startsWith('captured-multiline-') && f.endsWith('.json'))
  .flatMap((f) => (JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as { cases: Case[] }).cases);

const plain = (f: ParsedFrame): ParsedFrame => {
  const out: ParsedFrame = {};
  for (const k of ['function', 'file', 'line', 'column'] as const)
    if (f[k] !== undefined) (out as Record<string, unknown>)[k] = f[k];
  return out;
};

describe('captured multi-line messages', () => {
  it('hold at least 40 stacks whose message spans lines, from at least 5 engines', () => {
    // JSON.parse's message quotes the text in V8 only: elsewhere it is one line.
    const multiline = cases.filter((c) => c.message?.includes('\n'));
    expect(multiline.length).toBeGreaterThanOrEqual(40);
    expect(new Set(multiline.map((c) => c.id.split('/')[0]!.split('-')[0])).size).toBeGreaterThanOrEqual(5);
  });

  it.each(cases.map((c) => [c.id, c] as const))('%s: the header ends where the engine printed it', (_id, c) => {
    const hint = { exception_type: c.exception_type, message: c.message };
    const split = splitStack(c.stack, hint);
    expect(split.message).toBe(c.header);
    const parsed = parseStackTrace(c.stack, hint);
    expect(parsed.frames.map(plain)).toEqual(c.frames);
    expect(parsed.unparsed_line_count).toBe(0);
    expect(parseStackBody(split.frames)).toEqual(parsed);
  });

  // Without the message, the body runs from the topmost frame but for frame-shaped message lines
  // that an unreadable line follows: every frame is read, and the header is the engine's, but for message lines that read as frames right above the first frame, which
  // are then taken for the innermost frames (the message `probe failed\n    at x (y:1:2)`).
  it.each(cases.map((c) => [c.id, c] as const))('%s: without the message, every frame is read', (_id, c) => {
    const split = splitStack(c.stack);
    const parsed = parseStackTrace(c.stack);
    expect(c.header.startsWith(split.message)).toBe(true);
    const taken = parseStackBody(c.header.slice(split.message.length));
    expect(taken.unparsed_line_count).toBe(0);
    expect(parsed.frames.map(plain)).toEqual([...c.frames, ...taken.frames.map(plain)]);
    expect(parsed.unparsed_line_count).toBe(0);
    if (taken.frames.length > 0) expect(c.message).toMatch(/\n {4}at .*\)$/);
    else expect(split.message).toBe(c.header);
  });
});
