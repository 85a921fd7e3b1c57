// Captures the corpus: runs the scenarios in every engine here and writes
// test/errors/fixtures/corpus/captured-<engine>.json. Run by hand (README.md here), never in CI.
// Engines named as arguments (`node`, `deno`, `chromium`, `firefox`, `jsc`, `bun`, `hermes`) are the
// only ones run and written; none names them all.
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import * as engines from './engines.ts';
import { lineCase, v8Case, type CorpusCase } from './expect.ts';

const out = new URL('../../fixtures/corpus/', import.meta.url);
const reports: string[] = [];
const { server, base } = await engines.serve((b) => reports.push(b));
const byEngine = new Map<string, { origin: string; cases: CorpusCase[] }>();
const skipped: string[] = [];
const only = new Set(process.argv.slice(2));
const wanted = (engine: string): boolean => only.size === 0 || only.has(engine);

// The multi-line set writes captured-multiline-<engine>.json, its ids under `<run>/multiline/`.
const prefix = engines.set === 'multiline' ? 'multiline-' : '';

function add(engine: string, version: string, c: CorpusCase | string, id: string): void {
  if (typeof c !== 'string' && prefix) c.id = c.id.replace('/', '/multiline/');
  if (typeof c === 'string') {
    skipped.push(`${id}: ${c}`);
    return;
  }
  const entry = byEngine.get(engine) ?? { origin: `captured here: ${version}`, cases: [] };
  entry.origin = `captured here: ${version}`;
  entry.cases.push(c);
  byEngine.set(engine, entry);
}

async function attempt<T>(what: string, f: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await f();
  } catch (err) {
    console.error(`${what}: ${String(err).slice(0, 300)}`);
    return undefined;
  }
}

for (const kind of wanted('node') ? (['cjs', 'esm'] as const) : []) {
  const run = await attempt(`node ${kind}`, () => engines.node(kind));
  for (const r of run?.records ?? []) {
    const id = `node-${kind}/${r.name}`;
    add('node', run!.version, v8Case(id, r, run!.files), id);
    if (r.inspect && (r.cause || r.errors)) {
      const c = v8Case(`${id}-inspect`, r, run!.files, r.inspect);
      if (typeof c !== 'string') {
        c.linked = r.cause
          ? [{ source: 'cause', exception_type: r.cause.type, message: r.cause.message }]
          : r.errors!.map((e, i) => ({ source: `errors[${i}]`, exception_type: e.type, message: e.message }));
      }
      add('node', run!.version, c, `${id}-inspect`);
    }
  }
}
for (const u of wanted('node') ? ((await attempt('node uncaught', () => engines.uncaught())) ?? []) : []) {
  const id = `node-uncaught/${u.name}`;
  // The printout's own lines end with the CallSites' printing of the stack, before the properties:
  // up to the last CallSite's line (the message may hold ` {` and blank lines too).
  const sites = (u.record.sites ?? []) as { printed: string }[];
  const lastLine = `\n    at ${sites.at(-1)?.printed ?? ''}`;
  const stackOnly = u.printed.slice(0, u.printed.lastIndexOf(lastLine) + lastLine.length);
  const c = v8Case(id, { ...u.record, stack: stackOnly }, u.files, u.printed);
  if (typeof c !== 'string') {
    if (u.record.cause)
      c.linked = [{ source: 'cause', exception_type: u.record.cause.type, message: u.record.cause.message }];
    if (u.record.errors)
      c.linked = u.record.errors.map((e, i) => ({
        source: `errors[${i}]`,
        exception_type: e.type,
        message: e.message,
      }));
  }
  add('node', u.version, c, id);
}

const deno = wanted('deno') ? await attempt('deno', engines.deno) : undefined;
// Deno formats frames itself (not through CallSite#toString), so its lines are split at the known file.
for (const r of deno?.records ?? [])
  add('deno', deno!.version, lineCase(`deno/${r.name}`, 'v8', r, deno!.files, true), `deno/${r.name}`);

for (const via of wanted('chromium') ? ['plain', 'query', 'blob'] : []) {
  const run = await attempt(`chromium ${via}`, () => engines.chromium(base, via));
  const files =
    via === 'plain' ? [`${base}/static/app.js`] : via === 'query' ? [`${base}/static/app.js${engines.longQuery}`] : [];
  // A long query makes every frame line kilobytes: a few scenarios show it.
  for (const r of (run?.records ?? []).filter((x, i) => via !== 'query' || i < 8)) {
    // blob: and data: URLs are only known once the page made them: the CallSites name them.
    const own =
      files.length > 0
        ? files
        : [
            ...new Set(
              (r.sites ?? [])
                .map((s) => String(s.getFileName ?? ''))
                .filter((f) => f.startsWith('blob:') || f.startsWith('data:')),
            ),
          ];
    add(
      'chromium',
      `Chromium ${run!.version}`,
      v8Case(`chromium-${via}/${r.name}`, r, own),
      `chromium-${via}/${r.name}`,
    );
  }
}

for (const via of wanted('firefox') ? ['plain', 'query'] : []) {
  const run = await attempt(`firefox ${via}`, () => engines.firefox(base, via, reports));
  const file = via === 'plain' ? `${base}/static/app.js` : `${base}/static/app.js${engines.longQuery}`;
  for (const r of (run?.records ?? []).filter((x, i) => via !== 'query' || i < 8)) {
    // Closure markers (`fn/<`) are read by frame-line.ts, whose reading of names is not what the
    // message set is about: its cases keep to stacks without them.
    if (prefix && /\/<+@/.test(r.stack)) {
      skipped.push(`firefox-${via}/${r.name}: a closure name`);
      continue;
    }
    add(
      'firefox',
      run!.version,
      lineCase(`firefox-${via}/${r.name}`, 'spidermonkey', r, [file], false),
      `firefox-${via}/${r.name}`,
    );
  }
}

const jsc = wanted('jsc') ? await attempt('jsc', engines.jsc) : undefined;
for (const r of jsc?.records ?? [])
  add('jsc', jsc!.version, lineCase(`jsc/${r.name}`, 'jsc', r, jsc!.files, false), `jsc/${r.name}`);
const bun = wanted('bun') ? await attempt('bun', engines.bun) : undefined;
for (const r of bun?.records ?? []) {
  const files = [
    ...bun!.files,
    pathToFileURL(bun!.files[0]!).href,
    `file://${bun!.files[0]!.split('/')
      .map((p) => p.replace(/ /g, '%20'))
      .join('/')}`,
  ];
  add('bun', bun!.version, lineCase(`bun/${r.name}`, 'jsc', r, files, true), `bun/${r.name}`);
}
const hermes = wanted('hermes') ? await attempt('hermes', engines.hermes) : undefined;
for (const r of hermes?.records ?? [])
  add('hermes', hermes!.version, lineCase(`hermes/${r.name}`, 'hermes', r, hermes!.files, true), `hermes/${r.name}`);

server.close();
for (const [engine, entry] of byEngine) {
  writeFileSync(new URL(`captured-${prefix}${engine}.json`, out), `${JSON.stringify(entry, null, 1)}\n`);
  console.log(`${engine}: ${entry.cases.length} cases`);
}
console.log(`left out (${skipped.length}):\n  ${skipped.map((l) => l.slice(0, 300)).join('\n  ')}`);
process.exit(0);
