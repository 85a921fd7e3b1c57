// `npm run bench [name…]`: runs each benchmark in its own process, one after another, so they do
// not compete for the machine's two cores. Each prints its figures as ratios against a baseline
// measured in the same run.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';

const dir = new URL('.', import.meta.url).pathname;
/** Modules the benchmarks import, not benchmarks themselves. */
const helpers = ['run.ts', 'support.ts', 'cpu.ts', 'alert-rules.ts'];
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && !helpers.includes(f))
  .map((f) => f.replace(/\.ts$/, ''));
const chosen = process.argv.slice(2).length > 0 ? process.argv.slice(2) : all;
let failed = 0;
for (const name of chosen) {
  if (!all.includes(name)) {
    process.stderr.write(`no benchmark "${name}"; choose from ${all.join(', ')}\n`);
    process.exit(2);
  }
  process.stdout.write(`\n=== bench/${name}.ts ===\n`);
  const res = spawnSync(process.execPath, [`${dir}${name}.ts`], { stdio: 'inherit' });
  if (res.status !== 0) failed += 1;
}
process.exit(failed ? 1 : 0);
