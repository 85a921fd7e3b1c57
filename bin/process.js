#!/usr/bin/env node
// Procfile `web` and `worker`: `node bin/process.js web|worker`; `node bin/process.js warm` fills
// the cache below without starting anything (`npm run build`, which Heroku runs at build time).
//
// Node's compile cache is turned on before any TypeScript loads. When every module is found in it,
// Node never loads its TypeScript stripper (a WebAssembly build of swc), which held ~25 MB of each
// process's memory for its whole life (measured: an idle web at ~138 MB instead of ~162 MB), and
// the process starts faster. The cache is keyed by each file's contents, so an edited file is
// simply stripped again; `portable` keeps it valid when the app directory moves (a slug built in
// one place and run in another). https://nodejs.org/api/module.html#module-compile-cache
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

const entries = { web: '../src/web.ts', worker: '../workers/main.ts' };
const [role, only] = process.argv.slice(2);

module.enableCompileCache({
  directory:
    process.env.NODE_COMPILE_CACHE ?? fileURLToPath(new URL('../node_modules/.cache/cairn-compile', import.meta.url)),
  portable: true,
});

/** The V8 flags the Procfile gives a role: the cache is kept per set of flags. */
function procfileFlags(name) {
  const line = readFileSync(new URL('../Procfile', import.meta.url), 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  return (line ?? '').split(/\s+/).filter((word) => word.startsWith('--'));
}

if (role === 'warm' && only === undefined) {
  // Each role's modules, compiled under that role's own flags.
  for (const name of Object.keys(entries)) {
    execFileSync(process.execPath, [...procfileFlags(name), fileURLToPath(import.meta.url), 'warm', name], {
      stdio: 'inherit',
    });
  }
} else if (role === 'warm' && Object.hasOwn(entries, only)) {
  await import(entries[only]);
  module.flushCompileCache();
} else if (Object.hasOwn(entries, role) && only === undefined) {
  // Before the entry's imports: OpenTelemetry patches modules as they load (src/telemetry).
  const { startTracingIfWanted } = await import('../src/telemetry/index.ts');
  await startTracingIfWanted(role);
  const { main } = await import(entries[role]);
  const { databaseTlsHint } = await import('../src/db-errors.ts');
  await main().catch((err) => {
    // A database setting the operator must change: say which, instead of a stack trace alone.
    const hint = databaseTlsHint(err);
    if (!hint) throw err;
    process.stderr.write(`Cairn could not start ${role}: ${err.message}\n  ${hint}\n`);
    process.exit(1);
  });
  // Written now rather than at exit, so that the next start finds it even if this one is killed.
  module.flushCompileCache();
} else {
  process.stderr.write(
    `usage: node bin/process.js web|worker|warm (not ${process.argv.slice(2).join(' ') || 'nothing'})\n`,
  );
  process.exit(2);
}
