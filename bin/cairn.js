#!/usr/bin/env node
// `npx cairn …` runs with Node 24 from the `node` devDependency (npx puts it first on PATH).
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `cairn needs Node 24 (this is ${process.version}); run it through npx or npm run, which use the project's Node 24\n`,
  );
  process.exit(1);
}
await import('../src/cli/main.ts');
