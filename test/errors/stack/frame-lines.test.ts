// Every line format of the engines, one line each, with the exact frame it must give: V8 (Chrome,
// Edge, Node, Deno, Bun), SpiderMonkey, JavaScriptCore, Hermes, React Native. The corpus test
// (corpus.test.ts) holds whole real stacks; this table names each form on its own.
import { describe, expect, it } from 'vitest';
import { parseFrameLine, type ParsedFrame } from '../../../src/domain/errors/pipeline/stack/index.ts';

const cases: [line: string, frame: ParsedFrame | undefined][] = [
  // V8
  ['    at fn (https://x.io/a.js:1:2)', { function: 'fn', file: 'https://x.io/a.js', line: 1, column: 2 }],
  ['    at https://x.io/a.js:1:2', { file: 'https://x.io/a.js', line: 1, column: 2 }],
  ['    at new Foo (/srv/a.js:3:4)', { function: 'new Foo', file: '/srv/a.js', line: 3, column: 4 }],
  ['    at Object.foo [as bar] (/srv/a.js:3:4)', { function: 'Object.foo', file: '/srv/a.js', line: 3, column: 4 }],
  ['    at get label [as label] (/srv/a.js:3:4)', { function: 'get label', file: '/srv/a.js', line: 3, column: 4 }],
  ['    at async fetchUser (/srv/a.js:3:4)', { function: 'fetchUser', file: '/srv/a.js', line: 3, column: 4 }],
  ['    at async https://x.io/x.js:3:1', { file: 'https://x.io/x.js', line: 3, column: 1 }],
  ['    at async /srv/app/prices.js:37:5', { file: '/srv/app/prices.js', line: 37, column: 5 }],
  ['    at async Promise.all (index 3)', { function: 'Promise.all' }],
  ['    at async Promise.any (index 0)', { function: 'Promise.any' }],
  ['    at Array.map (<anonymous>)', { function: 'Array.map', file: '<anonymous>' }],
  ['    at Array.map (native)', { function: 'Array.map', file: 'native' }],
  ['    at <anonymous>', { file: '<anonymous>' }],
  [
    '    at eval (webpack-internal:///./src/app.js:12:9)',
    { function: 'eval', file: 'webpack-internal:///./src/app.js', line: 12, column: 9 },
  ],
  [
    '    at eval (eval at <anonymous> (https://x.io/main.js:1:100), <anonymous>:3:7)',
    {
      function: 'eval',
      file: 'https://x.io/main.js',
      line: 1,
      column: 100,
      eval_origin: 'eval at <anonymous> (https://x.io/main.js:1:100), <anonymous>:3:7',
    },
  ],
  [
    '    at eval (eval at f (eval at g (https://x.io/main.js:1:100), <anonymous>:3:4), <anonymous>:5:6)',
    {
      function: 'eval',
      file: 'https://x.io/main.js',
      line: 1,
      column: 100,
      eval_origin: 'eval at f (eval at g (https://x.io/main.js:1:100), <anonymous>:3:4), <anonymous>:5:6',
    },
  ],
  // Deno prints a `//# sourceURL`-named eval with its origin; the name is where the code is.
  [
    '    at render (eval at <anonymous> (file:///srv/main.js:1:1), webpack-internal:///./src/x.jsx:3:9)',
    {
      function: 'render',
      file: 'webpack-internal:///./src/x.jsx',
      line: 3,
      column: 9,
      eval_origin: 'eval at <anonymous> (file:///srv/main.js:1:1), webpack-internal:///./src/x.jsx:3:9',
    },
  ],
  ['    at fn(file.js:1:2)', { function: 'fn', file: 'file.js', line: 1, column: 2 }],
  [
    '    at a@b (https://x.io/node_modules/@scope/a.js:1:2)',
    { function: 'a@b', file: 'https://x.io/node_modules/@scope/a.js', line: 1, column: 2 },
  ],
  ['    at new Foo (/tmp/dir (1)/a.js:1:2)', { function: 'new Foo', file: '/tmp/dir (1)/a.js', line: 1, column: 2 }],
  [
    '    at Object.<anonymous> (C:\\Program Files (x86)\\app\\a.js:10:3)',
    { function: 'Object.<anonymous>', file: 'C:\\Program Files (x86)\\app\\a.js', line: 10, column: 3 },
  ],
  ['    at C:\\x\\a.js:1:2', { file: 'C:\\x\\a.js', line: 1, column: 2 }],
  ['    at /tmp/my dir/a.js:1:2', { file: '/tmp/my dir/a.js', line: 1, column: 2 }],
  ['    at file:///C:/x/a.mjs:1:2', { file: 'file:///C:/x/a.mjs', line: 1, column: 2 }],
  [
    '    at blob:https://x.io/5b1d2c3e-aaaa-bbbb-cccc-0123456789ab:4:5',
    { file: 'blob:https://x.io/5b1d2c3e-aaaa-bbbb-cccc-0123456789ab', line: 4, column: 5 },
  ],
  [
    '    at g (wasm://wasm/5c4f1d8e:wasm-function[1]:0x3e)',
    { function: 'g', file: 'wasm://wasm/5c4f1d8e', line: 1, column: 63 },
  ],
  ['    at wasm://wasm/5c4f1d8e:wasm-function[1]:0x3e', { file: 'wasm://wasm/5c4f1d8e', line: 1, column: 63 }],
  ['    at a (b) (/srv/a.js:1:2)', { function: 'a (b)', file: '/srv/a.js', line: 1, column: 2 }],
  [
    '    at [Symbol.iterator] (/srv/a.js:1:2)',
    { function: '[Symbol.iterator]', file: '/srv/a.js', line: 1, column: 2 },
  ],
  // Hermes
  [
    '    at fn (address at index.android.bundle:1:234)',
    { function: 'fn', file: 'index.android.bundle', line: 1, column: 234 },
  ],
  [
    '    at anonymous (address at /data/app/index.android.bundle:1:9)',
    { function: 'anonymous', file: '/data/app/index.android.bundle', line: 1, column: 9 },
  ],
  // SpiderMonkey
  ['fn@https://x.io/a.js:1:2', { function: 'fn', file: 'https://x.io/a.js', line: 1, column: 2 }],
  ['@https://x.io/a.js:1:2', { file: 'https://x.io/a.js', line: 1, column: 2 }],
  ['get label@https://x.io/a.js:1:2', { function: 'get label', file: 'https://x.io/a.js', line: 1, column: 2 }],
  ['set x@https://x.io/a.js:1:2', { function: 'set x', file: 'https://x.io/a.js', line: 1, column: 2 }],
  // A closure's name is its place as SpiderMonkey printed it: `fn/<` ran in an anonymous function in `fn`.
  ['fn/<@https://x.io/a.js:1:2', { function: 'fn/<', file: 'https://x.io/a.js', line: 1, column: 2 }],
  ['fn/inner</<@https://x.io/a.js:1:2', { function: 'fn/inner</<', file: 'https://x.io/a.js', line: 1, column: 2 }],
  [
    'setTimeout handler*fn/<@https://x.io/a.js:1:2',
    { function: 'fn/<', file: 'https://x.io/a.js', line: 1, column: 2 },
  ],
  ['setTimeout handler*fn@https://x.io/a.js:1:2', { function: 'fn', file: 'https://x.io/a.js', line: 1, column: 2 }],
  ['async*@https://x.io/a.js:1:2', { file: 'https://x.io/a.js', line: 1, column: 2 }],
  [
    '@https://x.io/a.js line 12 > eval:1:3',
    { file: 'https://x.io/a.js', line: 12, eval_origin: 'https://x.io/a.js line 12 > eval:1:3' },
  ],
  [
    'f@https://x.io/a.js line 2 > Function:1:2',
    { function: 'f', file: 'https://x.io/a.js', line: 2, eval_origin: 'https://x.io/a.js line 2 > Function:1:2' },
  ],
  [
    'f@https://x.io/a.js line 2 > eval line 1 > eval:1:2',
    {
      function: 'f',
      file: 'https://x.io/a.js',
      line: 2,
      eval_origin: 'https://x.io/a.js line 2 > eval line 1 > eval:1:2',
    },
  ],
  ['@debugger eval code:1:5', { file: 'debugger eval code', line: 1, column: 5 }],
  ['fn@https://user@x.io/a.js:1:2', { function: 'fn', file: 'https://user@x.io/a.js', line: 1, column: 2 }],
  ['a@b@https://x.io/a.js:1:2', { function: 'a@b', file: 'https://x.io/a.js', line: 1, column: 2 }],
  [
    'ok@resource://gre/modules/x.sys.mjs:3:5',
    { function: 'ok', file: 'resource://gre/modules/x.sys.mjs', line: 3, column: 5 },
  ],
  [
    'fn@moz-extension://0a1b/content.js:3:5',
    { function: 'fn', file: 'moz-extension://0a1b/content.js', line: 3, column: 5 },
  ],
  // JavaScriptCore and React Native
  ['forEach@[native code]', { function: 'forEach', file: '[native code]' }],
  ['global code@https://x.io/a.js:4:1', { function: 'global code', file: 'https://x.io/a.js', line: 4, column: 1 }],
  ['module code@https://x.io/a.js:4:1', { function: 'module code', file: 'https://x.io/a.js', line: 4, column: 1 }],
  ['eval code', { function: 'eval code' }],
  ['eval code@', { function: 'eval code' }],
  ['fn@1:234', { function: 'fn', line: 1, column: 234 }],
  ['fn@index.android.bundle:1:234', { function: 'fn', file: 'index.android.bundle', line: 1, column: 234 }],
  ['http://x/app.js:1:2', { file: 'http://x/app.js', line: 1, column: 2 }],
  ['fn@file:///C:/x/a.js:1:2', { function: 'fn', file: 'file:///C:/x/a.js', line: 1, column: 2 }],
  // `@` in a URL after `@` that starts it: a path (Vite serves its runtime at `/@react-refresh`, `/@vite/client`,
  // `/@fs/…`), a query, the user part of the authority.
  [
    'performReactRefresh@http://localhost:5173/@react-refresh:267:29',
    { function: 'performReactRefresh', file: 'http://localhost:5173/@react-refresh', line: 267, column: 29 },
  ],
  [
    'createHotContext@http://localhost:5173/@vite/client:1:2',
    { function: 'createHotContext', file: 'http://localhost:5173/@vite/client', line: 1, column: 2 },
  ],
  [
    'fn@http://x/a.js?u=me@example.com:1:2',
    { function: 'fn', file: 'http://x/a.js?u=me@example.com', line: 1, column: 2 },
  ],
  [
    'fn@http://user@localhost:3000/app.js:1:2',
    { function: 'fn', file: 'http://user@localhost:3000/app.js', line: 1, column: 2 },
  ],
  [
    '@http://localhost:5173/@fs/srv/app/x.js:3:4',
    { file: 'http://localhost:5173/@fs/srv/app/x.js', line: 3, column: 4 },
  ],
  ['a@b@http://x/@c/d.js:1:2', { function: 'a@b', file: 'http://x/@c/d.js', line: 1, column: 2 }],
  ['obj["@fn"]@http://x/@scope/a.js:5:6', { function: 'obj["@fn"]', file: 'http://x/@scope/a.js', line: 5, column: 6 }],
  ['@run@Scratchpad/1:2:3', { function: '@run', file: 'Scratchpad/1', line: 2, column: 3 }],
  // React Native: a frame without a name prints its location alone (JavaScriptCore), or Hermes's
  // bytecode location alone.
  ['102.js:1:2956', { file: '102.js', line: 1, column: 2956 }],
  ['js-modules/102.js:3:40', { file: 'js-modules/102.js', line: 3, column: 40 }],
  ['main.jsbundle:1:2345', { file: 'main.jsbundle', line: 1, column: 2345 }],
  ['address at index.android.bundle:1:2345', { file: 'index.android.bundle', line: 1, column: 2345 }],
  ['    at address at index.android.bundle:1:2345', { file: 'index.android.bundle', line: 1, column: 2345 }],
  // Not frames
  ['12:30:45', undefined],
  ['address at 12:30:45', undefined],
  ['see 102.js:1:2', undefined],
  ['102.js:1', undefined],
  ['102.js:1:2 failed', undefined],
  ['Error: no user jane@example.com', undefined],
  ['  details: a@b.io', undefined],
  ['/srv/x.js:10', undefined],
  ['    throw new Error("x");', undefined],
  ['    ^', undefined],
  ['', undefined],
];

// Lines as real engines and published parsers' suites printed them, with where each comes from.
const real: [origin: string, line: string, frame: ParsedFrame][] = [
  // Firefox ESR 153.8, captured here (corpus/capture/scenarios.js; fixtures/corpus/captured-firefox.json).
  ...(
    [
      ['outerWork/<@', 51, 52, 'outerWork/<'],
      ['modules</Bar.prototype._baz/<@', 55, 74, 'modules</Bar.prototype._baz/<'],
      ['modules<@', 56, 13, 'modules<'],
      ['runScenarios/next/<@', 135, 111, 'runScenarios/next/<'],
      ['holder["@fn"]@', 60, 37, 'holder["@fn"]'],
    ] as const
  ).map(([head, line, column, name]): [string, string, ParsedFrame] => [
    'Firefox ESR 153.8',
    `${head}http://127.0.0.1:39995/static/app.js:${line}:${column}`,
    { function: name, file: 'http://127.0.0.1:39995/static/app.js', line, column },
  ]),
  [
    'Firefox ESR 153.8',
    '@run@http://127.0.0.1:39995/static/app.js line 8 > eval:1:76',
    {
      function: '@run',
      file: 'http://127.0.0.1:39995/static/app.js',
      line: 8,
      eval_origin: 'http://127.0.0.1:39995/static/app.js line 8 > eval:1:76',
    },
  ],
  // getsentry/sentry-javascript@f7a6cc0c packages/browser/test/tracekit/firefox.test.ts (MIT), which
  // expects these names as printed.
  [
    'sentry-javascript Firefox 31',
    '.plugin/e.fn[c]/<@http://path/to/file.js:1:1',
    { function: '.plugin/e.fn[c]/<', file: 'http://path/to/file.js', line: 1, column: 1 },
  ],
  [
    'sentry-javascript Firefox 44',
    '[2]</Bar.prototype._baz/</<@http://path/to/file.js:703:28',
    { function: '[2]</Bar.prototype._baz/</<', file: 'http://path/to/file.js', line: 703, column: 28 },
  ],
  [
    'sentry-javascript Firefox 66',
    '          test/<@http://localhost:5000/:34:7',
    { function: 'test/<', file: 'http://localhost:5000/', line: 34, column: 7 },
  ],
  // …/react-native.test.ts: React Native's JavaScriptCore prints an anonymous frame as its location.
  [
    'sentry-javascript React Native Android production',
    'index.android.bundle:156:572',
    { file: 'index.android.bundle', line: 156, column: 572 },
  ],
  [
    'sentry-javascript React Native Android production',
    'index.android.bundle:29:955',
    { file: 'index.android.bundle', line: 29, column: 955 },
  ],
  // stacktracejs/error-stack-parser@9f33c22 spec/fixtures/captured-errors.js (MIT): `@` in names and URLs.
  [
    'error-stack-parser Firefox 43',
    'obj["@fn"]@Scratchpad/1:10:29',
    { function: 'obj["@fn"]', file: 'Scratchpad/1', line: 10, column: 29 },
  ],
  ['error-stack-parser Firefox 43', '@Scratchpad/1:11:1', { file: 'Scratchpad/1', line: 11, column: 1 }],
  [
    'error-stack-parser Firefox 60',
    'obj["@who"]@http://localhost:5000/misc/@stuff/foo.js:4:9',
    { function: 'obj["@who"]', file: 'http://localhost:5000/misc/@stuff/foo.js', line: 4, column: 9 },
  ],
  [
    'error-stack-parser Firefox 60',
    'who@http://localhost:5000/misc/@stuff/foo.js:3:9',
    { function: 'who', file: 'http://localhost:5000/misc/@stuff/foo.js', line: 3, column: 9 },
  ],
];

describe('frame lines as engines printed them', () => {
  it.each(real)('%s: %s', (_origin, line, frame) => {
    expect(parseFrameLine(line)).toEqual(frame);
  });
});

describe('frame lines of every engine', () => {
  it.each(cases)('%s', (line, frame) => {
    expect(parseFrameLine(line)).toEqual(frame);
  });

  it('reads a frame line of any length up to the stack limit (a data: URL, a long query)', () => {
    const url = `https://x.io/app.js?${'q=1&'.repeat(8000)}`;
    expect(parseFrameLine(`    at load (${url}:1:2)`)).toEqual({ function: 'load', file: url, line: 1, column: 2 });
    const data = `data:text/javascript;base64,${'QUJD'.repeat(12_000)}`;
    expect(parseFrameLine(`run@${data}:1:7`)).toEqual({ function: 'run', file: data, line: 1, column: 7 });
  });
});
