// Symbolication on a real bundler's output: the fixture app is bundled and minified by esbuild
// for two releases whose positions differ, run to get V8's real stack, its maps uploaded to the
// object store (S3), and its events captured. Frames map to the original file, line, column and
// enclosing function with context lines; both releases make one group; unmapped frames say why.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StackFrame } from '../../src/domain/errors/pipeline/symbolicate.ts';
import { call } from '../support/harness.ts';
import { capture, envBase, groupIdOf, readStored, useStack } from './support.ts';

interface Bundle {
  url: string;
  code: string;
  map: Record<string, unknown>;
  stack: string;
}

const appDir = new URL('./fixtures/app/src/', import.meta.url).pathname;
let tmp: string;
const t = useStack();
const bundles: Bundle[] = [];

/** Bundles `srcDir` with esbuild, runs it, and keeps the frames of the bundle from V8's stack. */
async function bundle(srcDir: string, url: string): Promise<Bundle> {
  const out = await build({
    entryPoints: [join(srcDir, 'app.ts')],
    bundle: true,
    minify: true,
    sourcemap: 'external',
    sourcesContent: true,
    write: false,
    outfile: join(srcDir, '../dist/main.js'),
    format: 'iife',
    globalName: 'App',
    logLevel: 'silent',
  });
  const code = out.outputFiles.find((f) => f.path.endsWith('.js'))!.text;
  const map = JSON.parse(out.outputFiles.find((f) => f.path.endsWith('.map'))!.text) as Record<string, unknown>;
  let stack = '';
  try {
    runInNewContext(`${code}\nApp.run();`, {}, { filename: url });
  } catch (err) {
    // V8's frames of the bundle; the vm's own frames and its source-line decoration are dropped.
    const lines = (err as Error)
      .stack!.split('\n')
      .filter((l) => l.trimStart().startsWith('at ') && (l.includes(url) || l.includes('<anonymous>')));
    stack = [`${(err as Error).name}: ${(err as Error).message}`, ...lines].join('\n');
  }
  return { url, code, map, stack };
}

function frames(event: Record<string, unknown>): StackFrame[] {
  return event.stack_frames as StackFrame[];
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'cairn-sym-'));
  // Release 2: the same code moved down and with a new function, so every position differs.
  mkdirSync(join(tmp, 'src'));
  for (const f of ['app.ts', 'util.ts']) {
    const source = readFileSync(join(appDir, f), 'utf8');
    const extra = f === 'util.ts' ? 'export function unused(): number {\n  return 41 + 1;\n}\n' : '';
    writeFileSync(join(tmp, 'src', f), `// release 2\n// moved\n// down\n${extra}${source}`);
  }
  bundles.push(await bundle(appDir, 'https://shop.example.com/assets/main.1a2b3c4d.js'));
  bundles.push(await bundle(join(tmp, 'src'), 'https://shop.example.com/assets/main.9f8e7d6c.js'));
  const put = (release: string, file: string, map: unknown) =>
    call(t.s.web.url, 'PUT', `${envBase(t.env)}/releases/${release}/source_maps`, {
      key: t.env.secretKey,
      body: { file, source_map: map },
    });
  expect((await put('1.0.0', bundles[0]!.url, bundles[0]!.map)).status).toBe(201);
  // Release 2's map is uploaded under the path only: a frame matches it once the origin is dropped.
  expect((await put('2.0.0', '/assets/main.9f8e7d6c.js', bundles[1]!.map)).status).toBe(201);
});
afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
});

describe('symbolication', () => {
  it('the two releases really differ where they run', () => {
    expect(bundles[0]!.stack).toContain('main.1a2b3c4d.js:');
    expect(bundles[0]!.stack.replace(/main\.\w+\.js/g, '')).not.toBe(bundles[1]!.stack.replace(/main\.\w+\.js/g, ''));
  });

  it('maps frames to the original file, line, enclosing function and context, and groups both releases as one', async () => {
    const stored = [];
    for (const [i, release] of ['1.0.0', '2.0.0'].entries()) {
      const uid = await capture(t.s.web, t.env, {
        event_time: '2026-11-21T12:00:00Z',
        exception_type: 'TypeError',
        message: 'not a price: abc',
        stack: bundles[i]!.stack,
        release,
      });
      stored.push((await readStored(t.s.web, t.env, uid)).body);
    }
    const [one, two] = stored as [
      Record<string, unknown> & { name: string },
      Record<string, unknown> & { name: string },
    ];
    const top1 = frames(one).at(-1)!;
    expect(top1).toMatchObject({ function: 'parsePrice', line: 5, in_app: true });
    expect(top1.file).toMatch(/src\/util\.ts$/);
    expect(top1.context_line).toContain('throw new TypeError');
    expect(top1.pre_context!.at(-1)).toContain('Number.isNaN');
    expect(top1.generated).toMatchObject({ file: bundles[0]!.url, line: 1 });
    // The caller's frame is named after the function it ran in, not the function it called.
    const names = frames(one)
      .filter((f) => !f.unmapped_reason)
      .map((f) => f.function);
    expect(names).toEqual(expect.arrayContaining(['checkout', 'Cart.total', 'run']));
    const top2 = frames(two).at(-1)!;
    expect(top2).toMatchObject({ function: 'parsePrice', line: 5 + 6 });
    expect(groupIdOf(two.name)).toBe(groupIdOf(one.name));
    const group = await call(t.s.web.url, 'GET', `${envBase(t.env)}/error_groups/${groupIdOf(one.name)}`, {
      key: t.env.secretKey,
    });
    expect(group.body).toMatchObject({
      occurrence_count: 2,
      last_release: '2.0.0',
      grouping: { method: 'in_app_frames' },
    });
    expect((group.body.grouping as { frames: { function: string }[] }).frames.map((f) => f.function)).toContain(
      'parsePrice',
    );
  });

  it('says why a frame stayed unmapped', async () => {
    const event = (release: string, file: string, line: number) => ({
      event_time: '2026-11-21T12:00:00Z',
      exception_type: 'E',
      release,
      stack_frames: [{ function: 'f', file, line, column: 1 }],
    });
    const cases: [Record<string, unknown>, string][] = [
      [event('9.9.9', bundles[0]!.url, 1), 'no_maps_for_release'],
      [event('1.0.0', 'https://shop.example.com/assets/other.js', 1), 'no_map_for_file'],
      [event('1.0.0', bundles[0]!.url, 999), 'position_outside_map'],
      [
        {
          event_time: '2026-11-21T12:00:00Z',
          exception_type: 'E',
          stack_frames: [{ function: 'f', file: 'x.js', line: 1 }],
        },
        'no_release',
      ],
    ];
    for (const [e, reason] of cases) {
      const stored = await readStored(t.s.web, t.env, await capture(t.s.web, t.env, e));
      expect(frames(stored.body)[0]!.unmapped_reason).toBe(reason);
    }
  });

  it("lists a release's maps, and refuses a map that is not one", async () => {
    const list = await call<{ source_maps: { file: string; size_bytes: number }[] }>(
      t.s.web.url,
      'GET',
      `${envBase(t.env)}/releases/1.0.0/source_maps`,
      { key: t.env.secretKey },
    );
    expect(list.body.source_maps).toEqual([
      expect.objectContaining({ file: bundles[0]!.url, size_bytes: expect.any(Number) }),
    ]);
    const bad = await call(t.s.web.url, 'PUT', `${envBase(t.env)}/releases/1.0.0/source_maps`, {
      key: t.env.secretKey,
      body: { file: 'x.js', source_map: { version: 3, mappings: 5 } },
    });
    expect(bad).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
    // A name of 2,000 characters that take 3 bytes each: 400, not the 500 of an index row Postgres refuses.
    const wide = Array.from({ length: 2000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20000))).join('');
    const long = await call(t.s.web.url, 'PUT', `${envBase(t.env)}/releases/1.0.0/source_maps`, {
      key: t.env.secretKey,
      body: { file: wide, source_map: { version: 3, sources: ['a.ts'], names: [], mappings: 'AAAA' } },
    });
    expect(long).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
  });
});
