// Enclosing function names through a real bundle: the typed-app fixture (TypeScript functions the
// old heuristic could not name) is bundled and minified by esbuild, run to get V8's real stack, and
// its frames symbolicated through the packed map: each names the original function it ran in.
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { CompactMap } from '../../src/domain/errors/source-maps/compact-map.ts';
import { parseStack } from '../../src/domain/errors/pipeline/stack/index.ts';
import { symbolicateFrame, type MapRef } from '../../src/domain/errors/pipeline/symbolicate.ts';

const entry = new URL('./fixtures/typed-app/app.ts', import.meta.url).pathname;
const url = 'https://shop.example.com/assets/typed.js';

describe('symbolication through the parser', () => {
  it('names each frame after the original function around it', async () => {
    const out = await build({
      entryPoints: [entry],
      bundle: true,
      minify: true,
      sourcemap: 'external',
      sourcesContent: true,
      write: false,
      outfile: '/dist/typed.js',
      format: 'iife',
      globalName: 'App',
      logLevel: 'silent',
      target: 'es2022',
    });
    const code = out.outputFiles.find((f) => f.path.endsWith('.js'))!.text;
    const map = new CompactMap(out.outputFiles.find((f) => f.path.endsWith('.map'))!.text);
    let stack = '';
    try {
      runInNewContext(`${code}\nApp.start();`, {}, { filename: url });
    } catch (err) {
      stack = (err as Error).stack!;
    }
    const frames = parseStack(stack).filter((f) => f.file === url);
    expect(frames.length).toBeGreaterThanOrEqual(4);
    const ref: MapRef = { file: url, file_path: '/assets/typed.js', sha256: 'x', size_bytes: 1, object_key: 'k' };
    const mapped = (await Promise.all(frames.map((f) => symbolicateFrame(f, '1.0.0', [ref], async () => map)))).filter(
      (f) => !f.unmapped_reason,
    );
    // Outermost first, as the stack parser orders them; the bundle's own names are minified away.
    expect(mapped.map((f) => f.generated?.function)).not.toContain('validate');
    expect(mapped.map((f) => f.function)).toEqual(['start', 'Checkout.run', 'Checkout.#submit', 'validate']);
    expect(mapped.at(-1)).toMatchObject({ line: 9, context_line: expect.stringContaining('throw new RangeError') });
    expect(mapped.every((f) => f.file?.endsWith('typed-app/app.ts'))).toBe(true);
  });
});
