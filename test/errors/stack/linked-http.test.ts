// Linked exceptions and unparsed lines through the whole pipeline, over HTTP: Node's own printing
// of a real error with a cause (util.inspect, as an uncaught error or console.error prints it)
// from an esbuild bundle is captured; the event reads back with the cause as a linked exception
// whose frames are mapped through the uploaded map and scrubbed, the outer exception alone grouped,
// and a line no format reads counted and kept, scrubbed.
import { inspect } from 'node:util';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { build } from 'esbuild';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StackFrame } from '../../../src/domain/errors/pipeline/symbolicate.ts';
import { call } from '../../support/harness.ts';
import { capture, envBase, groupIdOf, readStored, useStack } from '../support.ts';

const appDir = new URL('../fixtures/app/src/', import.meta.url).pathname;
const url = 'https://shop.example.com/assets/main.5e6f7a8b.js';
const t = useStack();
let printed: string;

interface Linked {
  source: string;
  parent?: number;
  exception_type: string;
  message?: string;
  stack_frames: StackFrame[];
  unparsed_line_count: number;
}

beforeAll(async () => {
  const out = await build({
    entryPoints: [join(appDir, 'app.ts')],
    bundle: true,
    minify: true,
    sourcemap: 'external',
    sourcesContent: true,
    write: false,
    outfile: join(appDir, '../dist/main.js'),
    format: 'iife',
    globalName: 'App',
    logLevel: 'silent',
  });
  const code = out.outputFiles.find((f) => f.path.endsWith('.js'))!.text;
  const map = JSON.parse(out.outputFiles.find((f) => f.path.endsWith('.map'))!.text) as Record<string, unknown>;
  let cause: Error | undefined;
  try {
    runInNewContext(`${code}\nApp.run();`, {}, { filename: url });
  } catch (err) {
    cause = err as Error;
  }
  const outer = new Error('checkout failed for jane@example.com', { cause });
  Object.assign(outer, { order: 42 });
  printed = inspect(outer);
  const put = await call(t.s.web.url, 'PUT', `${envBase(t.env)}/releases/r1/source_maps`, {
    key: t.env.secretKey,
    body: { file: url, source_map: map },
  });
  expect(put.status).toBe(201);
}, 60_000);

describe('linked exceptions over HTTP', () => {
  it('reads the cause of a printed error as a linked exception, mapped and scrubbed; the outer exception is grouped', async () => {
    expect(printed).toContain('[cause]: ');
    const uid = await capture(t.s.web, t.env, {
      event_time: '2026-11-25T10:00:00Z',
      exception_type: 'Error',
      message: 'checkout failed for jane@example.com',
      stack: printed,
      release: 'r1',
    });
    const event = (await readStored(t.s.web, t.env, uid)).body;
    const linked = event.linked_exceptions as Linked[];
    expect(linked).toHaveLength(1);
    expect(linked[0]).toMatchObject({ source: 'cause', unparsed_line_count: 0 });
    expect(linked[0]!.exception_type).toMatch(/Error$/);
    const mapped = linked[0]!.stack_frames.filter((f) => f.generated?.file === url);
    expect(mapped.length).toBeGreaterThan(0);
    for (const f of mapped) expect(f.file).toMatch(/src\/(app|util)\.ts$/);
    expect(event.unparsed_line_count).toBe(0);
    // The outer exception's own frames (this test's file) make the group; the cause's do not.
    const outerFrames = event.stack_frames as StackFrame[];
    expect(outerFrames.some((f) => f.file?.endsWith('linked-http.test.ts'))).toBe(true);
    const group = await call<{ grouping: { frames: { file?: string }[] } }>(
      t.s.web.url,
      'GET',
      `${envBase(t.env)}/error_groups/${groupIdOf(event.name)}`,
      { key: t.env.secretKey },
    );
    expect(group.body.grouping.frames.every((f) => !f.file?.includes('main.5e6f7a8b'))).toBe(true);
    expect(String(event.stack)).not.toContain('jane@example.com');
  });

  it('counts and keeps, scrubbed, the lines it cannot read', async () => {
    const stack = [
      'Error: x',
      '    at f (/srv/app/a.js:1:2)',
      '    at the gate: token=s3cr3t-value',
      '    at g (/srv/app/a.js:3:4)',
    ].join('\n');
    const uid = await capture(t.s.web, t.env, {
      event_time: '2026-11-25T10:00:00Z',
      exception_type: 'Error',
      message: 'x',
      stack,
    });
    const event = (await readStored(t.s.web, t.env, uid)).body;
    expect(event.unparsed_line_count).toBe(1);
    expect(event.unparsed_lines).toEqual(['    at the gate: token=[Filtered]']);
    expect((event.stack_frames as StackFrame[]).map((f) => f.function)).toEqual(['g', 'f']);
    expect(event.linked_exceptions).toBeUndefined();
  });
});
