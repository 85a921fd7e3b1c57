// Converts sentry-javascript's browser stack parser tests (packages/browser/test/tracekit, MIT) into
// corpus fixtures: each test file runs against a stand-in for vitest and the SDK that records the
// error it parses and the frames it expects; those frames are put into the corpus's conventions
// (../../fixtures/corpus/PUBLISHED.md) by the rules below, never by Cairn's parser. Run by hand:
//   SENTRY_JAVASCRIPT=<checkout of getsentry/sentry-javascript> node test/errors/corpus/published/convert.ts
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';

interface SentryFrame {
  function?: string;
  filename?: string;
  lineno?: number;
  colno?: number;
}
interface Frame {
  function?: string;
  file?: string;
  line?: number;
  column?: number;
}
interface Recorded {
  test?: string;
  input?: { name?: string; message?: string; stack?: unknown };
  expected?: { stacktrace?: { frames?: SentryFrame[] } };
}

const repo = process.env.SENTRY_JAVASCRIPT;
if (!repo) throw new Error('set SENTRY_JAVASCRIPT to a checkout of getsentry/sentry-javascript');
// A checkout, or the files `git archive` gave with the commit in SENTRY_JAVASCRIPT_COMMIT.
const commit =
  process.env.SENTRY_JAVASCRIPT_COMMIT ??
  execFileSync('git', ['-C', repo, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
const harness = new URL('./harness.mjs', import.meta.url).pathname;
const suites = ['chromium', 'firefox', 'ie', 'misc', 'react-native', 'react', 'safari'];
const geckoStyle = new Set(['firefox', 'safari', 'react-native']);
const tmp = mkdtempSync(join(tmpdir(), 'tracekit-'));

/** Sentry's frame in the corpus's conventions: `?` is no name; async and aliases go; closure paths (`f/<`) stay. */
function convert(f: SentryFrame): Frame {
  const out: Frame = {};
  const fn = f.function?.replace(/^async /, '').replace(/ \[as [^\]]+\]$/, '');
  if (fn !== undefined && fn !== '?' && fn !== '') out.function = fn;
  if (f.filename !== undefined) out.file = f.filename;
  if (f.lineno !== undefined) out.line = f.lineno;
  if (f.colno !== undefined) out.column = f.colno;
  return out;
}

/** Frame lines in print order (innermost first), for the rules that read the printed text. */
const printed = (stack: string): string[] =>
  stack
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('at ') || l.includes('@') || l === 'eval code');

// Where Sentry's SDK or its conventions differ from reading the text as printed: each rule edits
// Sentry's expected frames (innermost last) and says why.
const rules: Record<string, { note: string; apply: (frames: Frame[], stack: string) => Frame[]; unparsed?: number }> = {
  'should parse webpack wrapped exceptions': {
    note: "the lines before the first frame (`(error: …)` and webpack's `at (error: (…))`, which has no position) are the message's, not frames",
    apply: (frames) => frames.filter((f) => f.line !== undefined || f.function !== undefined),
  },
  'should truncate frames that are over 1kb': {
    note: 'Sentry keeps only a cut file name of a frame line over 1 KiB; the corpus reads the line whole',
    apply: (frames, stack) =>
      frames.map((f) => {
        if (f.function !== 'Foo.testMethod') return f;
        const m = /\((http:\/\/localhost:5000\/A+):(\d+):(\d+)\)/.exec(stack)!;
        return { ...f, file: m[1], line: Number(m[2]), column: Number(m[3]) };
      }),
  },
  'should correctly parse a wasm stack trace': {
    note: "Sentry splits emscripten's C++ names at their first parenthesis; the corpus reads the name whole and the wasm location as V8's CallSite gives it (line 1, column = offset + 1)",
    apply: (frames, stack) => {
      const lines = printed(stack).filter((l) => l.includes('wasm-function['));
      const wasm = lines.reverse().map((l) => {
        const m = /^at (.*) \((http:\/\/localhost:8001\/main\.wasm):wasm-function\[\d+\]:0x([0-9a-f]+)\)$/.exec(l)!;
        return { function: m[1], file: m[2], line: 1, column: Number.parseInt(m[3]!, 16) + 1 };
      });
      let k = 0;
      return frames.map((f) =>
        f.file?.includes('wasm-function[') || f.file?.includes('main.wasm') || (f.file ?? '').startsWith('int)')
          ? wasm[k++]!
          : f,
      );
    },
  },
  'should correctly parse with data uris': {
    note: 'Sentry shortens data: URLs to `<data:…>`; the corpus keeps the URL and its position as printed',
    apply: (frames, stack) =>
      frames.map((f) => {
        if (!f.file?.startsWith('<data:')) return f;
        const m = /\((data:application\/javascript,[^\n]*):(\d+):(\d+)\)/.exec(stack)!;
        return { ...f, file: m[1], line: Number(m[2]), column: Number(m[3]) };
      }),
  },
  'should parse Firefox errors with eval URLs': {
    note: "Sentry names SpiderMonkey's unnamed eval frames `eval`; the corpus keeps a frame printed without a name nameless",
    apply: (frames, stack) => unnameGeckoEval(frames, stack),
  },
  'should parse exceptions with eval frames in Firefox 66': {
    note: "Sentry names SpiderMonkey's unnamed eval frames `eval`; the corpus keeps a frame printed without a name nameless",
    apply: (frames, stack) => unnameGeckoEval(frames, stack),
  },
  'should parse SecurityError': {
    note: "Sentry's SDK drops its own `sentryWrapped` frame; the corpus reads every printed frame",
    apply: (frames) => [
      { function: 'sentryWrapped', file: '../node_modules/@sentry/browser/esm/helpers.js', line: 90, column: 17 },
      ...frames,
    ],
  },
  'should correctly parse Invariant Violation errors and use framesToPop to drop the invariant frame': {
    note: "Sentry's SDK drops React's invariant frame (framesToPop); the corpus reads every printed frame",
    apply: (frames) => [...frames, { file: 'http://localhost:5000/static/js/foo.chunk.js', line: 1, column: 21738 }],
  },
  'should drop invariant frame for production errors if framesToPop is present': {
    note: "Sentry's SDK drops React's invariant frame (framesToPop); the corpus reads every printed frame",
    apply: (frames) => [...frames, { file: 'http://localhost:5000/static/js/foo.chunk.js', line: 1, column: 21738 }],
  },
  'should parse Safari 8 eval error': {
    note: "`eval code` is JavaScriptCore's frame for the evaluated code; Sentry skips the line, the corpus keeps it",
    apply: (frames) => [...frames, { function: 'eval code' }],
  },
  'should parse exceptions with eval frames in Safari 12': {
    note: "`eval code` is JavaScriptCore's frame for the evaluated code; Sentry skips the line, the corpus keeps it",
    apply: (frames, stack) => {
      // Print order: the `eval code` line stands before `eval@[native code]`; frames are innermost last.
      // Every line of this JavaScriptCore stack is a frame (bare URLs included).
      const lines = stack
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l !== '');
      const at = lines.indexOf('eval code');
      const out = [...frames];
      out.splice(frames.length - at, 0, { function: 'eval code' });
      return out;
    },
  },
};

function unnameGeckoEval(frames: Frame[], stack: string): Frame[] {
  const lines = printed(stack).reverse();
  return frames.map((f, i) => {
    if (f.function !== 'eval' || !lines[i]?.startsWith('@')) return f;
    const { function: _dropped, ...rest } = f;
    return rest;
  });
}

const cases: unknown[] = [];
const skipped: string[] = [];
for (const suite of suites) {
  const out = await build({
    entryPoints: [join(repo, `packages/browser/test/tracekit/${suite}.test.ts`)],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    plugins: [
      {
        name: 'stand-ins',
        setup(b) {
          b.onResolve({ filter: /^(vitest|@sentry\/core\/browser|\.\.\/\.\.\/src\/.*)$/ }, () => ({ path: harness }));
        },
      },
    ],
  });
  const file = join(tmp, `${suite}.mjs`);
  writeFileSync(file, `${out.outputFiles[0]!.text}\nexport { records as __records };\n`);
  const { __records } = (await import(file)) as { __records: Recorded[] };
  for (const r of __records) {
    const stack = r.input?.stack;
    const frames = r.expected?.stacktrace?.frames;
    const name = (r.test ?? '').split(' > ').at(-1)!;
    if (typeof stack !== 'string' || !frames) {
      skipped.push(`${suite}: ${name} (no stack text)`);
      continue;
    }
    const rule = rules[name];
    const expected = rule
      ? rule.apply(
          frames.map((f) => convert(f)),
          stack,
        )
      : frames.map((f) => convert(f));
    const slug = name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '');
    cases.push({
      id: `sentry-javascript/${suite}/${slug}`,
      engine: geckoStyle.has(suite) ? (suite === 'firefox' ? 'spidermonkey' : 'jsc') : 'v8',
      stack,
      ...(r.input?.name ? { exception_type: r.input.name } : {}),
      ...(r.input?.message ? { message: r.input.message } : {}),
      frame_count: expected.length,
      ...(expected.length > 0 ? { innermost: expected.at(-1), outermost: expected[0] } : {}),
      frames: expected,
      ...(rule?.unparsed ? { unparsed_lines: rule.unparsed } : {}),
      ...(rule ? { note: rule.note } : {}),
    });
  }
}
const target = new URL('../../fixtures/corpus/published-sentry-javascript.json', import.meta.url);
writeFileSync(
  target,
  `${JSON.stringify(
    {
      origin: `getsentry/sentry-javascript@${commit} packages/browser/test/tracekit/*.test.ts`,
      licence: 'MIT (Copyright (c) 2012 Functional Software, Inc. dba Sentry)',
      cases,
    },
    null,
    1,
  )}\n`,
);
console.log(`${cases.length} cases; skipped: ${skipped.join('; ') || 'none'}`);
