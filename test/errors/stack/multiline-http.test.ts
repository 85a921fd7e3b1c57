// A real Chromium error whose message spans lines, captured over HTTP and read back after the
// worker processed it: its frames come back. A message holding a function's source (`… {` on its
// first line, the closing brace indented) or a JSON body used to be read as Node's own properties,
// which swallowed every frame after it.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StackFrame } from '../../../src/domain/errors/pipeline/symbolicate.ts';
import { launchChromium } from '../../support/chromium.ts';
import { capture, readStored, useStack } from '../support.ts';

const app = [
  'function onRequest(req) {',
  '    if (!req.user) {',
  '      return { status: 401 };',
  '    }',
  '  }',
  "function invalidCallback() { throw new TypeError('handler is not a valid callback: ' + onRequest.toString()); }",
  'function register() { invalidCallback(); }',
  "function rejectBody(body) { throw new SyntaxError('invalid body: ' + JSON.stringify(body, null, 2)); }",
  'function receive() { rejectBody({ user: { id: 7 }, items: [] }); }',
  'function record(f) { try { f(); } catch (e) { return { stack: e.stack, name: e.name, message: e.message }; } }',
  'window.__errors = [record(register), record(receive)];',
].join('\n');

interface Thrown {
  stack: string;
  name: string;
  message: string;
}

const t = useStack();
let server: Server;
let base: string;
let thrown: Thrown[];

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/app.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(app);
    else res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><script src="/app.js"></script>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const browser = await launchChromium();
  try {
    const tab = await browser.newPage();
    await tab.goto(`${base}/`);
    thrown = await tab.evaluate(() => (globalThis as unknown as { __errors: Thrown[] }).__errors);
  } finally {
    await browser.close();
  }
}, 60_000);

afterAll(async () => {
  server?.close();
});

/** Where `name` is called from, or throws, in app.js: its line and column as V8 counts them. */
function at(line: number, text: string): { line: number; column: number } {
  return { line, column: app.split('\n')[line - 1]!.indexOf(text) + 1 };
}

describe('a Chromium error whose message spans lines, over HTTP', () => {
  it.each([
    ['a function source', 0, [at(7, 'invalidCallback()'), at(6, 'new TypeError')], ['register', 'invalidCallback']],
    ['a JSON body', 1, [at(9, 'rejectBody('), at(8, 'new SyntaxError')], ['receive', 'rejectBody']],
  ] as const)('%s in the message keeps its frames', async (_what, i, positions, names) => {
    const e = thrown[i]!;
    expect(e.message.split('\n').length).toBeGreaterThan(3);
    expect(e.stack.startsWith(`${e.name}: ${e.message}\n    at `)).toBe(true);
    const uid = await capture(t.s.web, t.env, {
      event_time: '2026-11-25T10:00:00Z',
      exception_type: e.name,
      message: e.message,
      stack: e.stack,
    });
    const event = (await readStored(t.s.web, t.env, uid)).body;
    const frames = (event.stack_frames as StackFrame[]).map((f) => ({
      function: f.function,
      file: f.file,
      line: f.line,
      column: f.column,
    }));
    // Outermost first: the page's script, the record() call, then the two known functions.
    expect(frames.slice(-2)).toEqual(
      names.map((name, k) => ({ function: name, file: `${base}/app.js`, ...positions[k]! })),
    );
    expect(frames.map((f) => f.function).slice(0, -2)).toEqual([undefined, 'record']);
    expect(event.unparsed_line_count).toBe(0);
    expect(event.message).toBe(e.message);
  });
});
