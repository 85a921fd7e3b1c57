// `npm run packages [-- --out DIR]`: the publishable @cairnhq/sdk and @cairnhq/cli tarballs.
//
// The SDK is compiled from src/sdk with tsc to ES2022 modules plus declarations (one file per source
// file, `.ts` imports rewritten to `.js`), against the DOM library and no Node types, so what passes
// here runs in browsers and on Node 20+. Its resource types are written out in full
// (contract-types.ts), so it has no dependencies at all.
// The CLI is src/cli/published.ts bundled by esbuild for Node 20, with the SDK and commander left
// as its two dependencies. `npm pack` makes the tarballs; test/packages installs them for real.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build, type Plugin } from 'esbuild';
import ts from 'typescript';
import { cliVersion } from '../../src/cli/context.ts';
import { flattenContractTypes } from './contract-types.ts';

const root = path.resolve(import.meta.dirname, '../..');
const rootPackage = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  version: string;
  dependencies: Record<string, string>;
};

export const scope = '@cairnhq';
export const sdkName = `${scope}/sdk`;
export const cliName = `${scope}/cli`;

const common = {
  version: rootPackage.version,
  type: 'module',
  license: 'MIT',
  engines: { node: '>=20' },
};

export interface Built {
  sdk: string;
  cli: string;
}

/** Builds both packages in a scratch folder and packs them into `out`; returns the tarballs' paths. */
export async function buildPackages(out: string): Promise<Built> {
  if (cliVersion !== rootPackage.version) {
    throw new Error(`src/cli/context.ts cliVersion ${cliVersion} differs from package.json ${rootPackage.version}`);
  }
  const stage = mkdtempSync(path.join(tmpdir(), 'cairn-packages-'));
  try {
    mkdirSync(out, { recursive: true });
    const sdk = path.join(stage, 'sdk');
    const cli = path.join(stage, 'cli');
    buildSdk(sdk);
    await buildCli(cli);
    return { sdk: pack(sdk, out), cli: pack(cli, out) };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

function buildSdk(dir: string): void {
  const src = path.join(dir, 'src');
  mkdirSync(src, { recursive: true });
  const sdkDir = path.join(root, 'src/sdk');
  const sources = readdirSync(sdkDir).filter((f) => f.endsWith('.ts'));
  const program = ts.createProgram(
    sources.map((f) => path.join(sdkDir, f)),
    { ...projectOptions(), noEmit: true },
  );
  const contract = flattenContractTypes(program, `${sdkDir}/`);
  writeFileSync(
    path.join(src, 'contract-types.ts'),
    `// The API's resource types, written out from src/contract by scripts/packages.\n${contract.source}`,
  );
  for (const file of sources) {
    const text = readFileSync(path.join(sdkDir, file), 'utf8').replace(
      /from '\.\.\/contract\/[a-z-]+\.ts'/g,
      "from './contract-types.ts'",
    );
    if (text.includes("'../")) throw new Error(`src/sdk/${file} imports from outside src/sdk`);
    writeFileSync(path.join(src, file), text);
  }
  writeJson(path.join(dir, 'package.json'), {
    name: sdkName,
    description: 'Cairn SDK: end users, sign-in, error tracking, backups and webhooks over the Cairn API',
    ...common,
    exports: {
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './browser': { types: './dist/browser.d.ts', default: './dist/browser.js' },
      './package.json': './package.json',
    },
    main: './dist/index.js',
    types: './dist/index.d.ts',
    sideEffects: false,
    files: ['dist', 'README.md'],
  });
  // The browser's globals and no Node types: a Node-only API in the SDK fails here.
  const compiled = ts.createProgram(
    readdirSync(src).map((f) => path.join(src, f)),
    {
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: [],
      strict: true,
      noUncheckedIndexedAccess: true,
      verbatimModuleSyntax: true,
      erasableSyntaxOnly: true,
      allowImportingTsExtensions: true,
      rewriteRelativeImportExtensions: true,
      declaration: true,
      outDir: path.join(dir, 'dist'),
      rootDir: src,
      skipLibCheck: true,
    },
  );
  const emitted = compiled.emit();
  const problems = [...ts.getPreEmitDiagnostics(compiled), ...emitted.diagnostics];
  if (problems.length > 0) {
    const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => dir, getNewLine: () => '\n' };
    throw new Error(`the SDK does not compile on its own:\n${ts.formatDiagnostics(problems, host)}`);
  }
  writeFileSync(path.join(dir, 'README.md'), readFileSync(path.join(import.meta.dirname, 'sdk-readme.md')));
}

async function buildCli(dir: string): Promise<void> {
  // The CLI's imports of src/sdk become imports of the SDK package (everything it uses is exported
  // from the package's index; a missing export fails test/packages when the command loads).
  const sdkAsPackage: Plugin = {
    name: 'sdk-as-package',
    setup(b) {
      b.onResolve({ filter: /\/sdk\/[a-z-]+\.ts$/ }, () => ({ path: sdkName, external: true }));
    },
  };
  const result = await build({
    entryPoints: [path.join(root, 'src/cli/published.ts')],
    outfile: path.join(dir, 'dist/cairn.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    external: ['commander'],
    plugins: [sdkAsPackage],
    banner: { js: '#!/usr/bin/env node' },
    legalComments: 'none',
    metafile: true,
    logLevel: 'silent',
  });
  // Only the CLI's own code and small pure modules belong in the bundle, never a server dependency.
  const inputs = Object.keys(result.metafile.inputs).filter((f) => f.includes('node_modules/'));
  if (inputs.length > 0) throw new Error(`the CLI bundle pulled in packages: ${inputs.join(', ')}`);
  writeJson(path.join(dir, 'package.json'), {
    name: cliName,
    description: 'The cairn command: end users, error groups, backups (download, decrypt) and webhooks',
    ...common,
    bin: { cairn: './dist/cairn.js' },
    files: ['dist', 'README.md'],
    dependencies: { [sdkName]: rootPackage.version, commander: rootPackage.dependencies.commander },
  });
  writeFileSync(path.join(dir, 'README.md'), readFileSync(path.join(import.meta.dirname, 'cli-readme.md')));
}

function projectOptions(): ts.CompilerOptions {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(root, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error('tsconfig.json does not parse');
  return parsed.options;
}

function pack(dir: string, out: string): string {
  const json = execFileSync('npm', ['pack', '--json', '--pack-destination', out], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [packed] = JSON.parse(json) as [{ filename: string }];
  return path.join(out, packed.filename);
}

function writeJson(file: string, value: unknown): void {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { out: { type: 'string', default: path.join(root, '.data/packages') } } });
  const out = path.resolve(values.out);
  const built = await buildPackages(out);
  process.stdout.write(`${built.sdk}\n${built.cli}\n`);
}
