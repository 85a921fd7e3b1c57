// Runs the scenarios (scenarios.js + runner.js) in each real engine on this machine and answers the
// raw records each emitted: `{name, stack, type, message, inspect?, sites?}`. Engines come from
// Debian (chromium, firefox-esr, libjavascriptcoregtk-4.0-bin's jsc) and npm (deno, bun,
// hermes-engine-cli), installed outside the project (see README.md here).
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { uncaughtPrelude, uncaughtPrograms } from './uncaught.ts';

export interface RawRecord {
  name: string;
  stack: string;
  type?: string;
  message?: string;
  inspect?: string;
  sites?: Record<string, unknown>[] | null;
  cause?: { type: string; message: string };
  errors?: { type: string; message: string }[];
}

export interface EngineRun {
  engine: string;
  version: string;
  /** The files or URLs the scenarios ran from, as frames print them. */
  files: string[];
  records: RawRecord[];
  variant: string;
}

const here = new URL('.', import.meta.url).pathname;
/** Which scenarios run: `scenarios.js`, or `multiline.js` (messages that span lines) with CORPUS_SET=multiline. */
export const set = process.env.CORPUS_SET === 'multiline' ? 'multiline' : 'scenarios';
export const script = (): string =>
  readFileSync(join(here, `${set}.js`), 'utf8') + readFileSync(join(here, 'runner.js'), 'utf8');
export const enginesDir = process.env.CORPUS_ENGINES ?? '/opt/engines/node_modules';

export function records(output: string): RawRecord[] {
  return output
    .split('\n')
    .filter((l) => l.startsWith('CORPUS {'))
    .map((l) => JSON.parse(l.slice(7)) as RawRecord);
}

function run(cmd: string, args: string[], cwd: string): string {
  try {
    return execFileSync(cmd, args, {
      cwd,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    });
  } catch (err) {
    const e = err as { stdout?: string };
    if (e.stdout?.includes('CORPUS-DONE')) return e.stdout;
    throw err;
  }
}

const version = (cmd: string, args: string[]): string =>
  execFileSync(cmd, args, { encoding: 'utf8' }).split('\n')[0]!.trim();

/** A directory whose path has spaces, parentheses and `@`, as real checkouts do. */
export function oddDir(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'corpus-')), 'my app (copy)', '@scope', 'pkg');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function node(kind: 'cjs' | 'esm'): EngineRun {
  const dir = oddDir();
  const file = join(dir, kind === 'cjs' ? 'server.cjs' : 'server.mjs');
  const prelude =
    kind === 'cjs'
      ? "globalThis.__inspect = require('node:util').inspect;\nglobalThis.__assert = require('node:assert');\nglobalThis.__sitesWanted = true;\n"
      : "import { inspect } from 'node:util';\nimport assert from 'node:assert';\nglobalThis.__inspect = inspect;\nglobalThis.__assert = assert;\nglobalThis.__sitesWanted = true;\n";
  writeFileSync(file, prelude + script());
  const out = run(process.execPath, [file], dir);
  return {
    engine: 'node',
    version: `Node.js ${process.version}`,
    files: [kind === 'cjs' ? file : pathToFileURL(file).href],
    records: records(out),
    variant: kind,
  };
}

export interface UncaughtRun {
  version: string;
  files: string[];
  name: string;
  printed: string;
  record: RawRecord;
}

export function uncaught(): UncaughtRun[] {
  const dir = oddDir();
  const out: UncaughtRun[] = [];
  for (const [name, body] of Object.entries(uncaughtPrograms(set))) {
    const file = join(dir, name);
    writeFileSync(file, uncaughtPrelude + body);
    const url = name.endsWith('.mjs') ? pathToFileURL(file).href : file;
    const sites = execFileSync(process.execPath, [file], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, CORPUS_SITES: '1' },
    });
    const line = sites.split('\n').find((l) => l.startsWith('SITES '));
    let printed = '';
    try {
      execFileSync(process.execPath, [file], { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      printed = String((err as { stderr?: string }).stderr ?? '');
    }
    if (!line || !printed) continue;
    const info = JSON.parse(line.slice(6)) as RawRecord & { sites: Record<string, unknown>[] };
    out.push({
      version: `Node.js ${process.version}`,
      files: [url],
      name,
      printed,
      record: { ...info, name, stack: '' },
    });
  }
  return out;
}

export function deno(): EngineRun {
  const dir = oddDir();
  const file = join(dir, 'main.js');
  writeFileSync(file, script());
  const bin = join(enginesDir, '.bin/deno');
  const out = run(bin, ['run', '--allow-all', file], dir);
  return {
    engine: 'deno',
    version: version(bin, ['--version']),
    files: [pathToFileURL(file).href],
    records: records(out),
    variant: 'module',
  };
}

export function bun(): EngineRun {
  const dir = oddDir();
  const file = join(dir, 'main.js');
  writeFileSync(file, script());
  const bin = join(enginesDir, '.bin/bun');
  const out = run(bin, [file], dir);
  return {
    engine: 'bun',
    version: `Bun ${version(bin, ['--version'])}`,
    files: [file],
    records: records(out),
    variant: 'script',
  };
}

export function jsc(): EngineRun {
  const dir = mkdtempSync(join(tmpdir(), 'corpus-jsc-'));
  const file = join(dir, 'app.js');
  writeFileSync(file, script());
  const out = run('/usr/bin/jsc', [file], dir);
  const pkg = execFileSync('dpkg-query', ['-W', '-f=${Version}', 'libjavascriptcoregtk-4.0-bin'], { encoding: 'utf8' });
  return {
    engine: 'jsc',
    version: `JavaScriptCore (WebKitGTK ${pkg})`,
    files: [file],
    records: records(out),
    variant: 'shell',
  };
}

export function hermes(): EngineRun {
  const dir = mkdtempSync(join(tmpdir(), 'corpus-hermes-'));
  const file = join(dir, 'index.android.bundle.js');
  writeFileSync(file, script());
  const bin = join(enginesDir, 'hermes-engine-cli/linux64-bin/hermes');
  const out = run(bin, [file], dir);
  const pkg = JSON.parse(readFileSync(join(enginesDir, 'hermes-engine-cli/package.json'), 'utf8')) as {
    version: string;
  };
  return {
    engine: 'hermes',
    version: `Hermes (hermes-engine-cli ${pkg.version})`,
    files: [file],
    records: records(out),
    variant: 'cli',
  };
}

/** A local server for the browsers: the scenarios at several kinds of URL, and a report endpoint. */
export async function serve(onReport: (body: string) => void): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (req.method === 'POST' && url.pathname === '/report') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        onReport(body);
        res.writeHead(204, { 'access-control-allow-origin': '*' }).end();
      });
      return;
    }
    if (url.pathname.startsWith('/static/')) {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(script());
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(page(url.searchParams.get('via') ?? 'plain', url.searchParams.get('post') === '1'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address() as { port: number };
  return { server, base: `http://127.0.0.1:${address.port}` };
}

/** The long query a cache-busting bundler URL carries: a frame line well over 2 KiB. */
export const longQuery = `?v=${'0123456789abcdef'.repeat(160)}&build=corpus`;

function page(via: string, post: boolean): string {
  // `__emit` collects the lines; Firefox posts them back (no automation protocol drives Debian's build).
  const collect = `window.__sitesWanted = ${post ? 'false' : 'true'}; window.__lines = []; window.__emit = function (l) { window.__lines.push(l); if (l === 'CORPUS-DONE') { window.__done = true; ${post ? "fetch('/report', { method: 'POST', body: window.__lines.join('\\n') });" : ''} } };`;
  const load = {
    plain: `<script src="/static/app.js"></script>`,
    query: `<script src="/static/app.js${longQuery}"></script>`,
    module: `<script type="module" src="/static/app.mjs"></script>`,
    blob: `<script>fetch('/static/app.js').then(function (r) { return r.text(); }).then(function (t) { var s = document.createElement('script'); s.src = URL.createObjectURL(new Blob([t], { type: 'text/javascript' })); document.body.appendChild(s); });</script>`,
    data: `<script>fetch('/static/app.js').then(function (r) { return r.text(); }).then(function (t) { var s = document.createElement('script'); s.src = 'data:text/javascript;base64,' + btoa(unescape(encodeURIComponent(t))); document.body.appendChild(s); });</script>`,
  }[via];
  return `<!doctype html><html><head><title>corpus</title></head><body><script>${collect}</script>${load}</body></html>`;
}

export async function chromium(base: string, via: string): Promise<EngineRun> {
  const { launchChromium } = await import('../../../support/chromium.ts');
  const browser = await launchChromium(['--disable-component-update', '--disable-sync']);
  try {
    const tab = await browser.newPage();
    await tab.goto(`${base}/?via=${via}`);
    await tab.waitForFunction(() => (globalThis as unknown as { __done?: boolean }).__done === true, undefined, {
      timeout: 30_000,
    });
    const lines = await tab.evaluate(() => (globalThis as unknown as { __lines: string[] }).__lines);
    return {
      engine: 'chromium',
      version: browser.version(),
      files: [],
      records: records(lines.join('\n')),
      variant: via,
    };
  } finally {
    await browser.close();
  }
}

export async function firefox(base: string, via: string, reports: string[]): Promise<EngineRun> {
  const profile = mkdtempSync(join(tmpdir(), 'corpus-ff-'));
  writeFileSync(
    join(profile, 'user.js'),
    'user_pref("browser.shell.checkDefaultBrowser", false);\nuser_pref("datareporting.policy.dataSubmissionEnabled", false);\n',
  );
  const before = reports.length;
  const child = spawn(
    'firefox-esr',
    ['--headless', '--no-remote', '--profile', profile, `${base}/?via=${via}&post=1`],
    { stdio: 'ignore' },
  );
  try {
    for (let waited = 0; reports.length === before; waited += 200) {
      if (waited > 60_000) throw new Error('firefox did not report');
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    child.kill('SIGTERM');
  }
  return {
    engine: 'firefox',
    version: version('firefox-esr', ['--version']),
    files: [],
    records: records(reports[reports.length - 1]!),
    variant: via,
  };
}
