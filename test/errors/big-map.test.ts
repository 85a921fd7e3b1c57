// The largest source map an upload accepts, loaded under the worker's exact heap flags (Procfile):
// before the mappings were decoded straight into typed arrays, trace-mapping's per-segment arrays
// needed ~7.7× the JSON on the heap and a 50 MiB map killed the worker, and every event of its
// batch with it. The map is generated (esbuild output of a big TypeScript source) into a temp dir.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { uploadMap } from '../../src/api/routes/errors/source-maps.ts';
import { procfileArgs } from '../support/procfile.ts';

const root = new URL('../../', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'cairn-bigmap-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The worker's V8 flags, as the Procfile starts it. */
const workerFlags = (): string[] => procfileArgs('worker').filter((w) => /^--max-[a-z-]+=\d+$/.test(w));

// Parameters without object types: a source this big is past what the parser takes in the worker
// (scopes.ts), and the heuristic it falls back to does not see through those.
const fn = (i: number) => `export function handler${i}(input: Input): number {
  const total = input.id * ${i} + helper${i}(input);
  if (total < 0) throw new RangeError(\`negative \${input.label} ${i}\`);
  return total;
}
function helper${i}(x: Input): number {
  return x.id % ${i + 7};
}
`;

describe('the largest map an upload accepts', () => {
  it("loads and symbolicates under the worker's heap flags", async () => {
    const flags = workerFlags();
    expect(flags).toEqual(expect.arrayContaining([expect.stringMatching(/^--max-old-space-size=/)]));
    // The upload body is `{"file": …, "source_map": …}`; leave room for the rest of it.
    const limit = uploadMap.bodyLimit! - 4096;
    // ~550 bytes of map per function (measured), a little more as the numbers in names grow: size
    // it from a sample, and once more from the first try if that overshot.
    const bundle = async (n: number) => {
      const out = await build({
        stdin: {
          contents: `interface Input { id: number; label: string }\n${Array.from({ length: n }, (_, i) => fn(i)).join('\n')}`,
          sourcefile: 'src/handlers.ts',
          loader: 'ts',
        },
        bundle: true,
        minify: true,
        sourcemap: 'external',
        sourcesContent: true,
        write: false,
        outfile: join(tmp, 'main.js'),
        format: 'esm',
        logLevel: 'silent',
      });
      return { files: out.outputFiles, map: out.outputFiles.find((f) => f.path.endsWith('.map'))!, n };
    };
    const sample = await bundle(20_000);
    let built = await bundle(Math.floor((limit / sample.map.contents.length) * sample.n * 0.985));
    if (built.map.contents.length > limit)
      built = await bundle(Math.floor((limit / built.map.contents.length) * built.n * 0.995));
    const { files, map } = built;
    expect(map.contents.length).toBeLessThanOrEqual(limit);
    expect(map.contents.length).toBeGreaterThan(0.97 * limit);
    writeFileSync(join(tmp, 'main.js.map'), map.contents);
    // A position deep in the bundle: the throw of the last handler but one.
    const code = files.find((f) => f.path.endsWith('.js'))!.text;
    const lines = code.split('\n');
    const at = lines.findLastIndex((l) => l.includes('negative '));
    const column = lines[at]!.lastIndexOf('throw');

    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        ...flags,
        join(root, 'test/errors/fixtures/load-map.ts'),
        join(tmp, 'main.js.map'),
        String(at + 1),
        String(column),
      ],
      { maxBuffer: 1 << 20 },
    );
    const result = JSON.parse(stdout) as {
      pos: { source: string; line: number };
      function: string;
      heapUsedMiB: number;
      heapLimitMiB: number;
    };
    console.info(`map ${(map.contents.length / 2 ** 20).toFixed(1)} MiB under ${flags.join(' ')}:`, stdout);
    expect(result.pos.source).toBe('src/handlers.ts');
    expect(result.function).toMatch(/^handler\d+$/);
    expect(result.heapUsedMiB).toBeLessThan(result.heapLimitMiB);
  }, 60_000);
});
