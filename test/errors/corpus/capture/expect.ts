// Expected frames for the corpus, derived apart from Cairn's parser:
// - V8 engines (Node, Deno, Chromium): from the structured CallSites of a second run of the same
//   scenario, named by V8's own rule for printing a frame (CallSiteInfo's method-call and
//   constructor forms), and kept only where that name agrees with CallSite#toString.
// - The others (Firefox, JavaScriptCore, Hermes, Bun): from the printed line split where the
//   known file of the scenario (or a known location word) stands in it, which needs no grammar.
import { set, type RawRecord } from './engines.ts';

export interface ExpectedFrame {
  function?: string;
  file?: string;
  line?: number;
  column?: number;
}

type Site = Record<string, unknown> & { printed: string };

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && v > 0 ? v : undefined);

function frame(fn: string | undefined, file: string | undefined, line?: number, column?: number): ExpectedFrame {
  const out: ExpectedFrame = {};
  if (fn !== undefined && fn !== '<anonymous>') out.function = fn;
  if (file !== undefined) out.file = file;
  if (line !== undefined) out.line = line;
  if (column !== undefined) out.column = column;
  return out;
}

/** The name V8 prints for a frame, before its location (CallSiteInfo serialisation). */
function v8Name(s: Site): { name: string | undefined; printedPrefix: string } {
  const fn = str(s.getFunctionName);
  const type = str(s.getTypeName);
  const method = str(s.getMethodName);
  let name: string | undefined;
  let alias = '';
  if (s.isToplevel !== true && s.isConstructor !== true) {
    if (fn) {
      name = (type && !fn.startsWith(`${type}.`) ? `${type}.` : '') + fn;
      if (method && fn !== method && !fn.endsWith(`.${method}`)) alias = ` [as ${method}]`;
    } else {
      name = `${type ? `${type}.` : ''}${method ?? '<anonymous>'}`;
    }
  } else if (s.isConstructor === true) {
    name = `new ${fn ?? '<anonymous>'}`;
  } else {
    name = fn;
  }
  const prefix = `${s.isAsync === true ? 'async ' : ''}${name ?? ''}${alias}`;
  return { name, printedPrefix: prefix };
}

/** The frame a CallSite stands for, in the corpus's conventions; undefined when V8's two views disagree. */
export function fromSite(s: Site, files: string[]): ExpectedFrame | undefined {
  const combinator = /^(?:async )?(Promise\.(?:all|any|allSettled)) \(index \d+\)$/.exec(s.printed);
  if (combinator) return { function: combinator[1]! };
  const { name, printedPrefix } = v8Name(s);
  const file = str(s.getFileName) ?? str(s.getScriptNameOrSourceURL);
  const line = num(s.getLineNumber);
  const column = num(s.getColumnNumber);
  if (file?.startsWith('wasm://')) {
    // V8 prints a wasm frame with its function's own name only (CallSiteInfo's wasm form).
    const own = str(s.getFunctionName);
    if (!s.printed.startsWith(own ? `${own} (` : 'wasm://')) return undefined;
    return frame(own, file, line, column);
  }
  if (name !== undefined && !s.printed.startsWith(`${printedPrefix} (`)) return undefined;
  if (s.isEval === true) {
    const source = str(s.getScriptNameOrSourceURL);
    if (source && !source.startsWith('eval at')) return frame(name, source, line, column);
    // The outermost real location: where the known file stands in the eval origin.
    const origin = str(s.getEvalOrigin) ?? '';
    for (const f of files) {
      const m = new RegExp(`${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+):(\\d+)\\)`).exec(origin);
      if (m) return frame(name, f, Number(m[1]), Number(m[2]));
    }
    return undefined;
  }
  if (s.isNative === true) return frame(name, 'native');
  return frame(name, file ?? '<anonymous>', line, column);
}

// --- Non-V8 engines: split at the known file --------------------------------------------------

const extraFiles = [
  'webpack-internal:///./src/app.js',
  'webpack-internal:///./src/util.js',
  'webpack-internal:///./src/index.js',
  'generated/chunk.js',
  'JavaScript',
  '/root/build/lib/InternalBytecode/InternalBytecode.js',
];

function position(text: string): { line?: number; column?: number } | undefined {
  const m = /^:(\d+)(?::(\d+))?$/.exec(text);
  return m ? { line: Number(m[1]), ...(m[2] ? { column: Number(m[2]) } : {}) } : undefined;
}

/** SpiderMonkey's `asyncCause*displayName`: the display name as printed, closure path (`f/<`) and all. */
const closure = (name: string): string | undefined => {
  const n = name.slice(name.lastIndexOf('*') + 1);
  return n === '' ? undefined : n;
};

/** One printed frame line of Firefox, JavaScriptCore, Hermes or Bun, split at a known file. */
export function fromLine(line: string, files: string[]): ExpectedFrame | undefined {
  const t = line.trim();
  const known = [...files, ...extraFiles].sort((a, b) => b.length - a.length);
  if (t.startsWith('at ')) {
    const body = t.slice(3);
    const bareName = (n: string) => n.replace(/^async /, '').replace(/ \[as [^\]]+\]$/, '');
    for (const f of known) {
      const withName = body.indexOf(` (${f}:`);
      if (withName >= 0 && body.endsWith(')')) {
        const pos = position(body.slice(withName + 2 + f.length, -1));
        if (pos) return frame(bareName(body.slice(0, withName)), f, pos.line, pos.column);
      }
      const plain = body.replace(/^async /, '');
      if (plain.startsWith(`${f}:`)) {
        const pos = position(plain.slice(f.length));
        if (pos) return frame(undefined, f, pos.line, pos.column);
      }
    }
    // An eval frame: the outermost real location is where the known file stands in the origin, and
    // Deno's `<name>, <anonymous>:L:C` is a sourceURL-named eval at that name.
    const evalAt = body.indexOf(' (eval at ');
    if (evalAt >= 0) {
      for (const f of known) {
        const m = new RegExp(`\\(${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+):(\\d+)\\)`).exec(body);
        if (m) return frame(bareName(body.slice(0, evalAt)), f, Number(m[1]), Number(m[2]));
      }
    }
    for (const f of known) {
      const named = body.indexOf(` (${f}, <anonymous>:`);
      if (named >= 0) {
        const pos = position(body.slice(named + 2 + f.length + 13, -1));
        if (pos) return frame(bareName(body.slice(0, named)), f, pos.line, pos.column);
      }
    }
    const anon = /^(.+) \(<anonymous>\)$/.exec(body);
    if (anon) return frame(bareName(anon[1]!), '<anonymous>');
    const wasm = /^(?:(.+) \()?(wasm:\/\/wasm\/[0-9a-f]+):wasm-function\[\d+\]:0x([0-9a-f]+)\)?$/.exec(body);
    if (wasm)
      return frame(
        wasm[1] === undefined ? undefined : bareName(wasm[1]),
        wasm[2],
        1,
        Number.parseInt(wasm[3]!, 16) + 1,
      );
    const native = /^(.+) \((native)(?::(\d+):(\d+))?\)$/.exec(body);
    if (native)
      return frame(
        bareName(native[1]!),
        'native',
        native[3] ? Number(native[3]) : undefined,
        native[4] ? Number(native[4]) : undefined,
      );
    const unknown = /^(.+) \(unknown\)$/.exec(body);
    if (unknown) return frame(bareName(unknown[1]!), undefined);
    if (body === 'unknown') return {};
    return undefined;
  }
  const at = t.indexOf('@');
  if (at < 0) return t === 'eval code' || t === 'global code' ? { function: t } : undefined;
  for (const f of known) {
    const i = t.indexOf(`@${f}`);
    if (i < 0) continue;
    const rest = t.slice(i + 1 + f.length);
    const evalSite = /^ line (\d+) > /.exec(rest);
    if (evalSite) return frame(closure(t.slice(0, i)), f, Number(evalSite[1]));
    const pos = position(rest);
    if (pos) return frame(closure(t.slice(0, i)), f, pos.line, pos.column);
  }
  if (t.endsWith('@[native code]')) return frame(closure(t.slice(0, -14)), '[native code]');
  if (t.endsWith('@')) return frame(closure(t.slice(0, -1)), undefined);
  if (/@<\?>:wasm-function\[\d+\]$/.test(t)) return frame(t.slice(0, at), undefined);
  return undefined;
}

export interface CorpusCase {
  id: string;
  engine: 'v8' | 'spidermonkey' | 'jsc' | 'hermes';
  stack: string;
  exception_type?: string;
  message?: string;
  frame_count: number;
  innermost?: ExpectedFrame;
  outermost?: ExpectedFrame;
  frames?: ExpectedFrame[];
  /** The text before the first frame line as the engine printed it (the message set only). */
  header?: string;
  linked?: { source: string; exception_type: string; message?: string }[];
}

/** The error's type and message, as a capture sends them with its stack. */
const head = (r: RawRecord): { exception_type?: string; message?: string } =>
  r.type === undefined ? {} : { exception_type: r.type, ...(r.message ? { message: r.message } : {}) };

/** The printed frame lines of a non-V8 stack: all its lines but V8-style message lines. */
function frameLines(r: RawRecord, v8Style: boolean): { header: string; lines: string[] } {
  const lines = r.stack.split('\n');
  const head = v8Style ? `${r.type}${r.message ? `: ${r.message}` : ''}`.split('\n').length : 0;
  const header = head === 0 ? '' : `${lines.slice(0, head).join('\n')}\n`;
  return { header, lines: lines.slice(head).filter((l) => l.trim() !== '') };
}

/** A case from a V8 engine's record, or the reason it was left out. */
export function v8Case(id: string, r: RawRecord, files: string[], stack = r.stack): CorpusCase | string {
  if (!r.sites) return 'no CallSites';
  const frames: ExpectedFrame[] = [];
  for (const s of r.sites as Site[]) {
    const f = fromSite(s, files);
    if (!f) return `CallSite and its printing disagree: ${s.printed}`;
    frames.push(f);
  }
  // The printed stack must be the CallSites' own printing, line for line, else the runs differed.
  const printed = (r.sites as Site[]).map((s) => `    at ${s.printed}`);
  const lines = r.stack.split('\n');
  if (lines.slice(lines.length - printed.length).join('\n') !== printed.join('\n'))
    return 'the two runs printed different frames';
  frames.reverse();
  const block = `\n${printed.join('\n')}`;
  return {
    id,
    engine: 'v8',
    stack,
    ...head(r),
    frame_count: frames.length,
    innermost: frames.at(-1),
    outermost: frames[0],
    frames,
    ...(set === 'multiline' ? { header: stack.slice(0, stack.lastIndexOf(block) + 1) } : {}),
  };
}

export function lineCase(
  id: string,
  engine: CorpusCase['engine'],
  r: RawRecord,
  files: string[],
  v8Style: boolean,
): CorpusCase | string {
  const { header, lines } = frameLines(r, v8Style);
  const frames: ExpectedFrame[] = [];
  for (const l of lines) {
    const f = fromLine(l, files);
    if (!f) return `no known file in: ${l.slice(0, 200)}`;
    frames.push(f);
  }
  frames.reverse();
  return {
    id,
    engine,
    stack: r.stack,
    ...head(r),
    frame_count: frames.length,
    innermost: frames.at(-1),
    outermost: frames[0],
    frames,
    ...(set === 'multiline' ? { header } : {}),
  };
}
